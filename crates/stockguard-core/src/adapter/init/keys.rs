//! What a sale's Redis keys say about its stock, guessed from a sample (`SCAN`): keys of the
//! same shape (their digits aside) are one template; the digits that vary are the product
//! (`${id}`) and, when a second number varies under one product, the bucket (`${n}`); digits
//! that never vary are part of the name. Pure: the sample comes in, the guesses go out.

use std::collections::{BTreeMap, BTreeSet};

/// One sampled key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampledKey {
    pub key: String,
    /// Redis's `TYPE`: `string`, `hash`, `set`, `stream`, ...
    pub kind: String,
    /// A string's value.
    pub value: Option<String>,
    /// A hash's field names.
    pub fields: Vec<String>,
}

/// The key templates found, one per shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub template: String,
    pub kind: String,
    /// The product ids its keys carry.
    pub ids: BTreeSet<u64>,
    pub buckets: bool,
    /// Every sampled value is an integer (strings).
    pub integers: bool,
    /// The lowest sampled value (strings).
    pub lowest: Option<i64>,
    pub fields: BTreeSet<String>,
}

/// How the sale's Redis keeps its stock, as guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StockForm {
    Counter { template: String, negative_seen: bool },
    Hash { key: String, total: String, sold: String },
    Buckets { key: String, count: String },
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeysGuess {
    pub stock: Option<StockForm>,
    pub buyers: Option<String>,
    /// Stream keys (not per product): where accepted orders may wait.
    pub streams: Vec<String>,
    /// The products named by the keys (for a sale with no stock table).
    pub ids: BTreeSet<u64>,
    pub undecided: Vec<String>,
}

/// Splits a key into its text and its digit runs.
fn runs(key: &str) -> (Vec<String>, Vec<String>) {
    let (mut texts, mut numbers, mut text, mut number) = (Vec::new(), Vec::new(), String::new(), String::new());
    for c in key.chars() {
        if c.is_ascii_digit() {
            number.push(c);
        } else {
            if !number.is_empty() {
                texts.push(std::mem::take(&mut text));
                numbers.push(std::mem::take(&mut number));
            }
            text.push(c);
        }
    }
    if !number.is_empty() {
        texts.push(std::mem::take(&mut text));
        numbers.push(number);
    }
    texts.push(text);
    (texts, numbers)
}

/// A sampled key and its digit runs.
type KeyNumbers<'a> = (&'a SampledKey, Vec<String>);

/// Groups the sample into shapes. `known` are the product ids the database lists (empty when
/// it lists none): a lone key's product is the number among them.
pub fn shapes(sample: &[SampledKey], known: &[u64]) -> Vec<Shape> {
    let mut groups: BTreeMap<(Vec<String>, String), Vec<KeyNumbers<'_>>> = BTreeMap::new();
    for k in sample.iter().filter(|k| k.kind != "stream") {
        let (texts, numbers) = runs(&k.key);
        groups.entry((texts, k.kind.clone())).or_default().push((k, numbers));
    }
    let mut out = Vec::new();
    for ((texts, kind), keys) in groups {
        let n = keys[0].1.len();
        if n == 0 {
            continue;
        }
        let distinct = |i: usize| keys.iter().map(|(_, nums)| nums[i].as_str()).collect::<BTreeSet<_>>();
        let mut varying: Vec<usize> = (0..n).filter(|&i| distinct(i).len() > 1).collect();
        if varying.is_empty() {
            // One product's keys only: its number is the one the database knows, else the last.
            let nums = &keys[0].1;
            let at = (0..n).find(|&i| nums[i].parse().is_ok_and(|v: u64| known.contains(&v))).unwrap_or(n - 1);
            varying.push(at);
        }
        if varying.len() > 2 {
            continue;
        }
        let mut template = String::new();
        for (i, text) in texts.iter().enumerate() {
            template.push_str(text);
            if i < n {
                match varying.iter().position(|&v| v == i) {
                    Some(0) => template.push_str("${id}"),
                    Some(_) => template.push_str("${n}"),
                    None => template.push_str(&keys[0].1[i]),
                }
            }
        }
        let ids = keys.iter().filter_map(|(_, nums)| nums[varying[0]].parse().ok()).collect();
        let values: Vec<Option<i64>> =
            keys.iter().filter_map(|(k, _)| k.value.as_deref()).map(|v| v.trim().parse().ok()).collect();
        out.push(Shape {
            template,
            kind,
            ids,
            buckets: varying.len() == 2,
            integers: !values.is_empty() && values.iter().all(Option::is_some),
            lowest: values.iter().flatten().min().copied(),
            fields: keys.iter().flat_map(|(k, _)| k.fields.iter().cloned()).collect(),
        });
    }
    out
}

fn says_stock(template: &str) -> bool {
    let t = template.to_lowercase();
    t.contains("stock") || t.contains("kucun") || t.contains("库存") || t.contains("goods") || t.contains("count")
}

/// Picks the stock form, the buyer set and the streams from a sample.
pub fn guess(sample: &[SampledKey], known: &[u64]) -> KeysGuess {
    let shapes = shapes(sample, known);
    let mut out = KeysGuess {
        streams: sample.iter().filter(|k| k.kind == "stream").map(|k| k.key.clone()).collect(),
        ..Default::default()
    };
    let covers =
        |s: &Shape| if known.is_empty() { s.ids.len() } else { s.ids.iter().filter(|i| known.contains(i)).count() };
    let best = |pick: &dyn Fn(&Shape) -> bool| {
        shapes.iter().filter(|s| pick(s) && covers(s) > 0).max_by_key(|s| (covers(s), says_stock(&s.template)))
    };
    let counter = |s: &Shape| s.kind == "string" && s.integers && !s.buckets;
    let buckets = best(&|s| s.kind == "string" && s.integers && s.buckets);
    let count_key = buckets.and_then(|b| {
        best(&|s| {
            counter(s)
                && s.ids.intersection(&b.ids).next().is_some()
                && (s.template.contains("count") || s.template.contains("num"))
        })
    });
    let hash = best(&|s| {
        s.kind == "hash"
            && s.fields.iter().any(|f| f.to_lowercase().contains("total"))
            && s.fields.iter().any(|f| f.to_lowercase().contains("sold"))
    });
    let plain = best(&|s| counter(s) && says_stock(&s.template)).or_else(|| best(&counter));
    let (chosen, form) = if let (Some(b), Some(c)) = (buckets, count_key) {
        (b, StockForm::Buckets { key: b.template.clone(), count: c.template.clone() })
    } else if let Some(h) = hash {
        let field = |word: &str| h.fields.iter().find(|f| f.to_lowercase().contains(word)).cloned().unwrap_or_default();
        (h, StockForm::Hash { key: h.template.clone(), total: field("total"), sold: field("sold") })
    } else if let Some(p) = plain {
        (p, StockForm::Counter { template: p.template.clone(), negative_seen: p.lowest.is_some_and(|v| v < 0) })
    } else {
        out.undecided.push(
            "no Redis key per product holding a number was found in the sample: give [redis] by hand \
             (or leave it out for a sale kept in the database only)"
                .into(),
        );
        return out;
    };
    if !known.is_empty() && covers(chosen) < known.len() {
        out.undecided.push(format!(
            "the key template {} was found for {} of the {} products sampled",
            chosen.template,
            covers(chosen),
            known.len()
        ));
    }
    out.ids = chosen.ids.clone();
    out.stock = Some(form);
    out.buyers = best(&|s| s.kind == "set" && !s.buckets).map(|s| s.template.clone());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(key: &str, value: &str) -> SampledKey {
        SampledKey { key: key.into(), kind: "string".into(), value: Some(value.into()), fields: vec![] }
    }

    fn of(kind: &str, key: &str, fields: &[&str]) -> SampledKey {
        SampledKey {
            key: key.into(),
            kind: kind.into(),
            value: None,
            fields: fields.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn a_counter_per_product_with_digits_in_its_prefix_is_one_template() {
        let sample = [
            string("t42x:seckill:stock:1", "20"),
            string("t42x:seckill:stock:2", "18"),
            of("set", "t42x:seckill:order:1", &[]),
            of("set", "t42x:seckill:order:2", &[]),
            of("stream", "t42x:stream.orders", &[]),
        ];
        let g = guess(&sample, &[1, 2]);
        assert_eq!(
            g.stock,
            Some(StockForm::Counter { template: "t42x:seckill:stock:${id}".into(), negative_seen: false })
        );
        assert_eq!(g.buyers.as_deref(), Some("t42x:seckill:order:${id}"));
        assert_eq!(g.streams, ["t42x:stream.orders"]);
        assert!(g.undecided.is_empty(), "{:?}", g.undecided);
    }

    #[test]
    fn a_counter_below_zero_is_seen_and_the_id_without_a_separator_is_found() {
        let g = guess(&[string("GoodsKey:gs7", "-3"), string("GoodsKey:gs8", "4")], &[7, 8]);
        assert_eq!(g.stock, Some(StockForm::Counter { template: "GoodsKey:gs${id}".into(), negative_seen: true }));
    }

    #[test]
    fn bucket_keys_and_their_count_key_are_buckets() {
        let mut sample = vec![string("flash_bucket_count_1", "3"), string("flash_bucket_count_2", "3")];
        for id in 1..=2 {
            for n in 0..3 {
                sample.push(string(&format!("flash_stock_{id}_{n}"), "5"));
            }
        }
        let g = guess(&sample, &[1, 2]);
        assert_eq!(
            g.stock,
            Some(StockForm::Buckets { key: "flash_stock_${id}_${n}".into(), count: "flash_bucket_count_${id}".into() })
        );
    }

    #[test]
    fn a_hash_of_total_and_sold_with_no_database_names_the_products() {
        let sample = [
            of("hash", "ticket:1", &["ticket_total_nums", "ticket_sold_nums"]),
            of("hash", "ticket:2", &["ticket_total_nums", "ticket_sold_nums"]),
        ];
        let g = guess(&sample, &[]);
        assert_eq!(
            g.stock,
            Some(StockForm::Hash {
                key: "ticket:${id}".into(),
                total: "ticket_total_nums".into(),
                sold: "ticket_sold_nums".into()
            })
        );
        assert_eq!(g.ids, BTreeSet::from([1, 2]));
    }

    #[test]
    fn keys_of_other_products_only_say_the_template_covers_none() {
        let g = guess(&[string("stock:5", "1"), string("stock:6", "1")], &[1, 2]);
        assert!(g.stock.is_none());
        assert!(g.undecided[0].contains("no Redis key per product"));
    }
}
