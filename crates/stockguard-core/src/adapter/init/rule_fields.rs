//! Which fields of the form a rule of the adapter file is about (issue 49, item 8).
//!
//! A rule across sections ("[orders] reserving statuses need a [stock] reserved column") is
//! found by parsing the file the form would write, and comes back as the file's own sentence.
//! Said on the form as a whole, it left the person with "correct the marked fields" and nothing
//! marked. Each `[section] key` the sentence names is a place of the form: the field that holds
//! it is marked, with the rule's words beside it. A name the form has no field for (the
//! `[repair]` section, `[sale] settle_ms`) leaves the rule on the form as a whole.

use super::form::Field;

/// The form's fields a rule sentence names, in the order it names them, each once.
pub(super) fn fields_of_rule(rule: &str) -> Vec<Field> {
    let mut fields = Vec::new();
    let mut rest = rule;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else { break };
        let section = &after[..close];
        let key: String =
            after[close + 1..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if let Some(field) = field_of(section, &key) {
            if !fields.contains(&field) {
                fields.push(field);
            }
        }
        rest = &after[close + 1..];
    }
    fields
}

/// The form's field for `[section] key`, when the form has one.
fn field_of(section: &str, key: &str) -> Option<Field> {
    Some(match (section, key) {
        ("sale", "name") => Field::Name,
        ("stock", "reserved") => Field::StockReserved,
        ("stock", "remaining") => Field::StockRemaining,
        ("stock", "product") => Field::StockProduct,
        ("stock", _) => Field::StockTable,
        ("orders", "live" | "reserving" | "released" | "status") => Field::OrdersStatuses,
        ("orders", "quantity" | "quantity_column") => Field::OrdersQuantity,
        ("orders", "order_id") => Field::OrdersOrderId,
        ("orders", _) => Field::OrdersTable,
        ("redis", "buyers") => Field::RedisBuyers,
        ("redis", _) => Field::RedisStock,
        ("inflight", "queue") => Field::InflightQueue,
        ("inflight", "url" | "rabbitmq") => Field::InflightUrl,
        ("inflight", "redis_stream" | "stream") => Field::InflightStream,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_across_two_sections_names_a_field_in_each() {
        assert_eq!(
            fields_of_rule("[orders] reserving statuses need a [stock] reserved column"),
            vec![Field::OrdersStatuses, Field::StockReserved]
        );
    }

    #[test]
    fn a_rule_about_what_the_form_does_not_show_names_no_field() {
        assert!(fields_of_rule("[repair] rewrite = \"delta\" needs a [repair] ... ").is_empty());
        assert!(fields_of_rule("[sale] settle_ms is at most 60000").is_empty());
        assert!(fields_of_rule("no brackets at all").is_empty());
    }

    #[test]
    fn a_field_named_twice_is_marked_once() {
        assert_eq!(
            fields_of_rule("[inflight] redis_stream needs a [redis] section, and [inflight] stream"),
            vec![Field::InflightStream, Field::RedisStock]
        );
    }
}
