//! Redis key names of the stock contract (section 2).
//!
//! Every key of one product carries the hash tag `{P}` so that all of them land on one
//! Redis Cluster slot and a multi-key script can touch them together. The prefix (`sg` by
//! default) is configurable so that several sales, or several tests, can share one Redis.

/// Builds the key names for one key prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    prefix: String,
}

/// The default key prefix of the contract.
pub const DEFAULT_PREFIX: &str = "sg";

impl Keys {
    pub fn new(prefix: impl Into<String>) -> Self {
        Self { prefix: prefix.into() }
    }

    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `sg:{P}:stock`: units available for new reservations.
    pub fn stock(&self, product_id: u64) -> String {
        self.product_key(product_id, "stock")
    }

    /// `sg:{P}:inflight`: order_no -> qty reserved in Redis, not yet confirmed in the DB.
    pub fn inflight(&self, product_id: u64) -> String {
        self.product_key(product_id, "inflight")
    }

    /// `sg:{P}:buyers`: user_id -> units reserved (per-user limit).
    pub fn buyers(&self, product_id: u64) -> String {
        self.product_key(product_id, "buyers")
    }

    /// `sg:{P}:orders`: the reservation stream, consumer group `persist`.
    pub fn orders_stream(&self, product_id: u64) -> String {
        self.product_key(product_id, "orders")
    }

    /// `sg:{P}:fence`: highest rewrite fencing token applied.
    pub fn fence(&self, product_id: u64) -> String {
        self.product_key(product_id, "fence")
    }

    /// `sg:{P}:released`: hash order_no -> the sequence number at which its release was
    /// applied (the contract's set of applied releases, with the sequence added so that an
    /// exact reading can tell releases before its cut from those after).
    pub fn released(&self, product_id: u64) -> String {
        self.product_key(product_id, "released")
    }

    /// `sg:{P}:seq`: the product's sequence, incremented by every reservation and every
    /// applied release; an exact reading takes it as its cut. (An addition to the contract.)
    pub fn seq(&self, product_id: u64) -> String {
        self.product_key(product_id, "seq")
    }

    /// `sg:{P}:epoch`: the Redis history the product's sequence numbers belong to; set by
    /// every rebuild of its stock (to the rebuild's fencing token). Absent means epoch 0.
    /// (An addition to the contract.)
    pub fn epoch(&self, product_id: u64) -> String {
        self.product_key(product_id, "epoch")
    }

    /// `sg:{P}:lost`: the epoch in which an engine found the product's Redis history lost (the
    /// DB holds reservations Redis never issued, after a failover): every engine then writes
    /// the product's orders to the DB before answering them, until a rebuild starts a new
    /// epoch. (An addition to the contract.)
    pub fn lost(&self, product_id: u64) -> String {
        self.product_key(product_id, "lost")
    }

    /// `sg:{P}:idem`: `user_id:idempotency_key` -> order_no, so a retried request gets its
    /// first answer back. (An addition to the contract's key table; see `docs/contract.md`.)
    pub fn idempotency(&self, product_id: u64) -> String {
        self.product_key(product_id, "idem")
    }

    /// `sg:lock:rewrite:{P}`: the rewrite lock, value = holder token.
    pub fn rewrite_lock(&self, product_id: u64) -> String {
        format!("{}:lock:rewrite:{{{}}}", self.prefix, product_id)
    }

    /// Every key of one product, for clean-up of a product in the sandbox and in tests.
    pub fn all_for_product(&self, product_id: u64) -> Vec<String> {
        vec![
            self.stock(product_id),
            self.inflight(product_id),
            self.buyers(product_id),
            self.orders_stream(product_id),
            self.fence(product_id),
            self.released(product_id),
            self.idempotency(product_id),
            self.seq(product_id),
            self.epoch(product_id),
            self.lost(product_id),
            self.rewrite_lock(product_id),
        ]
    }

    fn product_key(&self, product_id: u64, name: &str) -> String {
        format!("{}:{{{}}}:{}", self.prefix, product_id, name)
    }
}

/// Name of the consumer group that persists reservations to the DB.
pub const PERSIST_GROUP: &str = "persist";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn product_keys_share_the_product_hash_tag() {
        let keys = Keys::new("sg");
        assert_eq!(keys.stock(42), "sg:{42}:stock");
        assert_eq!(keys.inflight(42), "sg:{42}:inflight");
        assert_eq!(keys.rewrite_lock(42), "sg:lock:rewrite:{42}");
        for key in keys.all_for_product(42) {
            assert!(key.contains("{42}"), "{key} lacks the hash tag");
        }
    }

    #[test]
    fn the_prefix_is_configurable() {
        assert_eq!(Keys::new("t1").fence(7), "t1:{7}:fence");
    }
}
