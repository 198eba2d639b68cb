//! Key templates of an adapter file: `${id}` for the product and `${n}` for a bucket. The
//! `${...}` form leaves a literal `{...}` alone, so a Redis Cluster hash tag in a sale's own
//! key names (`seckill:{stock}:${id}`) keeps its meaning.

use serde::{Deserialize, Serialize};

use crate::product_id::ProductId;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Template(String);

impl Template {
    pub fn new(text: &str) -> Self {
        Self(text.to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when the template names a product (`${id}`).
    pub fn per_product(&self) -> bool {
        self.0.contains("${id}")
    }

    /// The key of product `id`: the template with `${id}` replaced by the id's text (a number's
    /// digits, or text as it is).
    pub fn key(&self, id: &ProductId) -> String {
        self.0.replace("${id}", &id.to_string())
    }

    /// The key of bucket `n` of product `id`.
    pub fn bucket_key(&self, id: &ProductId, n: u64) -> String {
        self.key(id).replace("${n}", &n.to_string())
    }

    /// A glob matching every product's key (for `SCAN MATCH` when sampling).
    pub fn glob(&self) -> String {
        let escaped: String = self
            .0
            .chars()
            .flat_map(|c| match c {
                '*' | '?' | '[' | ']' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        escaped.replace("${id}", "*").replace("${n}", "*")
    }

    pub(super) fn require_id(&self, field: &str) -> Result<(), String> {
        if self.per_product() {
            Ok(())
        } else {
            Err(format!("{field} {:?} does not contain ${{id}} (the product)", self.0))
        }
    }

    pub(super) fn require_bucket(&self, field: &str) -> Result<(), String> {
        if self.0.contains("${n}") {
            Ok(())
        } else {
            Err(format!("{field} {:?} does not contain ${{n}} (the bucket)", self.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Template;
    use crate::product_id::ProductId;

    #[test]
    fn a_template_names_a_product_and_a_bucket_and_keeps_a_hash_tag() {
        let t = Template::new("flash:{stock}:${id}_${n}");
        assert_eq!(t.key(&7.into()), "flash:{stock}:7_${n}");
        assert_eq!(t.bucket_key(&7.into(), 2), "flash:{stock}:7_2");
        assert_eq!(t.key(&ProductId::Text("SKU-A".into())), "flash:{stock}:SKU-A_${n}");
        assert_eq!(t.glob(), "flash:{stock}:*_*");
    }

    #[test]
    fn glob_characters_of_a_key_are_escaped_for_scan() {
        assert_eq!(Template::new("a*b?[${id}]").glob(), "a\\*b\\?\\[*\\]");
    }
}
