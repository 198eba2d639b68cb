//! A form ([`ProposalForm`]) as the adapter file it stands for: each field built into its
//! typed part (a plain SQL name, a key template with `${id}`), every field that cannot be one
//! named with what is wrong ([`FieldProblem`]), then the file's own rules across sections by
//! parsing what would be written ([`AdapterFile::parse`]).

use std::path::Path;

use super::form::{
    Field, FieldProblem, InflightFields, InitialField, OrdersFields, Problem, ProposalForm, RedisFields,
    RedisStockFields, StatusMeaning, StockFields,
};
use super::rule_fields::fields_of_rule;
use crate::adapter::file::{
    AdapterFile, AdapterFileError, Buckets, Inflight, Initial, Join, Negative, OrdersSection, RedisSection,
    RepairSection, SaleSection, StatusValue, StockHash, StockSection,
};
use crate::adapter::ident::Ident;
use crate::adapter::template::Template;

/// Builds the typed parts of a file from text fields, noting each field that cannot be one.
#[derive(Default)]
struct Builder {
    problems: Vec<FieldProblem>,
}

impl Builder {
    fn ident(&mut self, field: Field, text: &str) -> Option<Ident> {
        let text = text.trim();
        if text.is_empty() {
            self.problems.push(FieldProblem::new(field, Problem::Empty, "", "a name is needed here"));
            return None;
        }
        match Ident::new(text) {
            Ok(i) => Some(i),
            Err(why) => {
                self.problems.push(FieldProblem::new(field, Problem::NotAName, text, why));
                None
            }
        }
    }

    /// An optional name: blank is none.
    fn maybe(&mut self, field: Field, text: &Option<String>) -> Option<Option<Ident>> {
        match text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            None => Some(None),
            Some(t) => self.ident(field, t).map(Some),
        }
    }

    fn template(&mut self, field: Field, text: &str, bucket: bool) -> Option<Template> {
        let text = text.trim();
        if text.is_empty() {
            // A section added by hand starts empty: say it is needed, not that it lacks `${id}`.
            self.problems.push(FieldProblem::new(field, Problem::Empty, "", "a key template is needed here"));
            return None;
        }
        if !text.contains("${id}") || (bucket && !text.contains("${n}")) {
            let needs = if bucket { "${id} and ${n}" } else { "${id}" };
            let detail = format!("the key template {text:?} does not contain {needs}");
            self.problems.push(FieldProblem::new(field, Problem::NoPlaceholder, text, detail));
            return None;
        }
        Some(Template::new(text))
    }

    fn text(&mut self, field: Field, text: &str) -> Option<String> {
        let text = text.trim();
        if text.is_empty() {
            self.problems.push(FieldProblem::new(field, Problem::Empty, "", "a value is needed here"));
            return None;
        }
        Some(text.to_string())
    }
}

/// A status value as the sale stores it: a number when it is one.
fn status_value(v: &str) -> StatusValue {
    match v.trim().parse::<i64>() {
        Ok(i) => StatusValue::Int(i),
        Err(_) => StatusValue::Text(v.trim().to_string()),
    }
}

fn blank_is_none(v: &Option<String>) -> Option<String> {
    v.as_deref().map(str::trim).filter(|t| !t.is_empty()).map(str::to_string)
}

impl ProposalForm {
    /// The adapter file the form stands for, or every field that cannot be part of one.
    pub fn to_file(&self) -> Result<AdapterFile, Vec<FieldProblem>> {
        let mut b = Builder::default();
        let name = b.text(Field::Name, &self.name);
        let stock = self.stock.as_ref().map(|s| stock_section(&mut b, s));
        let orders = self.orders.as_ref().map(|o| orders_section(&mut b, o));
        let redis = self.redis.as_ref().map(|r| redis_section(&mut b, r));
        let inflight = inflight_section(&mut b, &self.inflight);
        if !b.problems.is_empty() {
            return Err(b.problems);
        }
        let file = AdapterFile {
            sale: SaleSection {
                name: name.expect("no problem noted"),
                products: vec![],
                settle_ms: None,
                max_inflight: None,
            },
            stock: built(stock),
            orders: built(orders),
            redis: built(redis),
            inflight: inflight.expect("no problem noted"),
            repair: RepairSection::default(),
            compensation: Default::default(),
            switch: None,
            undecided: Vec::new(),
            lines: Default::default(),
        };
        // The file's own rules across sections, by parsing what would be written.
        let text = toml::to_string(&file).expect("an adapter file serializes to TOML");
        AdapterFile::parse(&text, Path::new("the form")).map_err(|e| {
            // A line of the text the form would write means nothing to the person filling it.
            let (rule, fields) = match e {
                AdapterFileError::Invalid { path, problem, .. } => {
                    let fields = fields_of_rule(&problem);
                    (AdapterFileError::Invalid { path, line: None, problem }.to_string(), fields)
                }
                e => (e.to_string(), Vec::new()),
            };
            // Marked on each field the rule names (the window shows it on the whole form only
            // when none of them is on screen), else on the form as a whole.
            let fields = if fields.is_empty() { vec![Field::Whole] } else { fields };
            fields.into_iter().map(|field| FieldProblem::new(field, Problem::Rule, "", rule.clone())).collect()
        })
    }

    /// The adapter file as it is written beside the profile: a header, then the file.
    pub fn to_file_text(&self) -> Result<String, Vec<FieldProblem>> {
        let file = self.to_file()?;
        let body = toml::to_string(&file).expect("an adapter file serializes to TOML");
        Ok(format!(
            "# Written by Stockguard's \"Attach a sale\" from the proposal of `stockguard adapter init`, as a person\n\
             # settled it. The format: docs/adapters/README.md. Check it with `stockguard adapter check`.\n\n{body}"
        ))
    }
}

/// A section built: every field of it was (a field that was not is a problem noted already).
fn built<T>(section: Option<Option<T>>) -> Option<T> {
    section.map(|s| s.expect("no problem noted: every part was built"))
}

fn stock_section(b: &mut Builder, s: &StockFields) -> Option<StockSection> {
    let table = b.ident(Field::StockTable, &s.table);
    let product = b.ident(Field::StockProduct, &s.product);
    let remaining = b.ident(Field::StockRemaining, &s.remaining);
    let reserved = b.maybe(Field::StockReserved, &s.reserved);
    let name = b.maybe(Field::StockName, &s.name);
    let initial = match &s.initial {
        InitialField::Column { column } => b.ident(Field::StockInitial, column).map(Initial::Column),
        InitialField::Baseline => Some(Initial::Baseline),
        InitialField::Fixed { units } if *units >= 0 => Some(Initial::Fixed(*units)),
        InitialField::Fixed { units } => {
            let detail = format!("initial stock {units} is negative");
            b.problems.push(FieldProblem::new(Field::StockInitial, Problem::NotANumber, &units.to_string(), detail));
            None
        }
    };
    Some(StockSection {
        table: table?,
        product: product?,
        remaining: remaining?,
        reserved: reserved?,
        initial: initial?,
        name: name?,
    })
}

fn orders_section(b: &mut Builder, o: &OrdersFields) -> Option<OrdersSection> {
    let table = b.ident(Field::OrdersTable, &o.table);
    let product = b.ident(Field::OrdersProduct, &o.product);
    let quantity_column = b.maybe(Field::OrdersQuantity, &o.quantity_column);
    let status = b.ident(Field::OrdersStatus, &o.status);
    let order_id = b.maybe(Field::OrdersOrderId, &o.order_id);
    let created = b.maybe(Field::OrdersCreated, &o.created);
    let user = b.maybe(Field::OrdersUser, &o.user);
    let join = o.join.as_ref().map(|j| {
        let (table, on, key) = (
            b.ident(Field::OrdersJoinTable, &j.table),
            b.ident(Field::OrdersJoinOn, &j.on),
            b.ident(Field::OrdersJoinKey, &j.key),
        );
        Some(Join { table: table?, on: on?, key: key? })
    });
    let of = |m: StatusMeaning| -> Vec<StatusValue> {
        o.statuses.iter().filter(|s| s.meaning == m).map(|s| status_value(&s.value)).collect()
    };
    let reserving = of(StatusMeaning::Reserving);
    let mut live = of(StatusMeaning::Live);
    live.extend(reserving.iter().cloned());
    if live.is_empty() {
        let detail = "no status is marked as holding a unit: mark the statuses of orders that keep theirs";
        b.problems.push(FieldProblem::new(Field::OrdersStatuses, Problem::NoLiveStatus, "", detail));
    }
    let quantity_column = quantity_column?;
    Some(OrdersSection {
        table: table?,
        product: product?,
        quantity: quantity_column.is_none().then_some(1),
        quantity_column,
        status: status?,
        live,
        released: of(StatusMeaning::Released),
        reserving,
        order_id: order_id?,
        created: created?,
        user: user?,
        join: match join {
            Some(j) => Some(j?),
            None => None,
        },
    })
}

fn redis_section(b: &mut Builder, r: &RedisFields) -> Option<RedisSection> {
    let mut section = RedisSection { stock: None, stock_hash: None, buckets: None, buyers: None, negative: None };
    match &r.stock {
        RedisStockFields::Counter { template, clamp } => {
            section.stock = b.template(Field::RedisStock, template, false);
            section.negative = clamp.then_some(Negative::Clamp);
        }
        RedisStockFields::Hash { key, total, sold } => {
            let key = b.template(Field::RedisStock, key, false);
            let (total, sold) = (b.text(Field::RedisHashTotal, total), b.text(Field::RedisHashSold, sold));
            section.stock_hash = Some(StockHash { key: key?, total: total?, sold: sold? });
        }
        RedisStockFields::Buckets { key, count } => {
            let key = b.template(Field::RedisStock, key, true);
            let count = b.template(Field::RedisBucketCount, count, false);
            section.buckets =
                Some(Buckets { key: key?, count: count?, table: None, product: None, bucket: None, available: None });
        }
    }
    section.buyers = match blank_is_none(&r.buyers) {
        Some(t) => Some(b.template(Field::RedisBuyers, &t, false)?),
        None => None,
    };
    (section.stock.is_some() || section.stock_hash.is_some() || section.buckets.is_some()).then_some(section)
}

fn inflight_section(b: &mut Builder, i: &InflightFields) -> Option<Inflight> {
    match i {
        InflightFields::None => Some(Inflight::None),
        InflightFields::RedisStream { stream, group, product_field, order_id_field } => {
            let stream = b.text(Field::InflightStream, stream);
            let group = b.text(Field::InflightGroup, group);
            let product_field = b.text(Field::InflightProductField, product_field);
            Some(Inflight::RedisStream {
                stream: Template::new(&stream?),
                group: group?,
                product_field: product_field?,
                order_id_field: blank_is_none(order_id_field),
            })
        }
        InflightFields::Rabbitmq { url, queue, product_field, management_url } => {
            let url = b.text(Field::InflightUrl, url);
            if let Some(u) = url.as_deref().filter(|u| !(u.starts_with("amqp://") || u.starts_with("amqps://"))) {
                let shown = crate::profile::redact(u);
                let detail = format!("{shown:?} is not an amqp:// or amqps:// URL");
                b.problems.push(FieldProblem::new(Field::InflightUrl, Problem::Rule, &shown, detail));
            }
            let queue = b.text(Field::InflightQueue, queue);
            let management_url = blank_is_none(management_url);
            if let Some(m) = management_url.as_deref().filter(|m| !m.starts_with("http://")) {
                let shown = crate::profile::redact(m);
                let detail = format!("{shown:?} is not an http:// URL (the RabbitMQ management API, port 15672)");
                b.problems.push(FieldProblem::new(Field::InflightManagementUrl, Problem::Rule, &shown, detail));
            }
            Some(Inflight::Rabbitmq {
                url: url?,
                queue: queue?,
                product_field: blank_is_none(product_field),
                management_url,
                stats_interval_ms: None,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::form::StatusRow;
    use super::*;

    fn course() -> ProposalForm {
        ProposalForm {
            name: "vouchers".into(),
            stock: Some(StockFields {
                table: "tb_seckill_voucher".into(),
                product: "voucher_id".into(),
                remaining: "stock".into(),
                reserved: None,
                initial: InitialField::Baseline,
                name: None,
            }),
            orders: Some(OrdersFields {
                table: "tb_voucher_order".into(),
                product: "voucher_id".into(),
                quantity_column: None,
                status: "status".into(),
                statuses: vec![
                    StatusRow { value: "1".into(), orders: 7, meaning: StatusMeaning::Live },
                    StatusRow { value: "4".into(), orders: 2, meaning: StatusMeaning::Released },
                ],
                order_id: Some("id".into()),
                created: Some("create_time".into()),
                user: Some(" ".into()),
                join: None,
            }),
            redis: Some(RedisFields {
                stock: RedisStockFields::Counter { template: "seckill:stock:${id}".into(), clamp: false },
                buyers: Some("seckill:order:${id}".into()),
            }),
            inflight: InflightFields::RedisStream {
                stream: "stream.orders".into(),
                group: "g1".into(),
                product_field: "voucherId".into(),
                order_id_field: Some("id".into()),
            },
        }
    }

    #[test]
    fn a_settled_form_writes_a_file_the_adapter_parser_accepts() {
        let text = course().to_file_text().unwrap();
        let file = AdapterFile::parse(&text, Path::new("attached.toml")).unwrap();
        assert!(file.needs_baseline());
        let orders = file.orders.unwrap();
        assert_eq!((orders.live, orders.released), (vec![StatusValue::Int(1)], vec![StatusValue::Int(4)]));
        assert_eq!((orders.quantity, orders.user), (Some(1), None), "one unit per order; a blank user is none");
        assert!(matches!(file.inflight, Inflight::RedisStream { ref group, .. } if group == "g1"));
        assert!(text.starts_with("# Written by Stockguard"), "{text}");
    }

    #[test]
    fn a_name_that_is_not_sql_and_a_template_without_its_product_are_said_in_their_fields() {
        let mut form = course();
        form.stock.as_mut().unwrap().remaining = "stock`; DROP".into();
        form.redis.as_mut().unwrap().stock =
            RedisStockFields::Counter { template: "seckill:stock".into(), clamp: false };
        let problems = form.to_file().unwrap_err();
        let fields: Vec<(Field, Problem)> = problems.iter().map(|p| (p.field, p.problem)).collect();
        assert_eq!(
            fields,
            [(Field::StockRemaining, Problem::NotAName), (Field::RedisStock, Problem::NoPlaceholder)],
            "{problems:?}"
        );
    }

    #[test]
    fn statuses_that_all_gave_their_unit_back_are_said_on_the_statuses() {
        let mut form = course();
        for s in &mut form.orders.as_mut().unwrap().statuses {
            s.meaning = StatusMeaning::Released;
        }
        let problems = form.to_file().unwrap_err();
        assert_eq!((problems[0].field, problems[0].problem), (Field::OrdersStatuses, Problem::NoLiveStatus));
    }

    #[test]
    fn a_rabbitmq_queue_with_a_web_url_is_said_on_the_url() {
        let mut form = course();
        form.inflight = InflightFields::Rabbitmq {
            url: "http://u:pw@mq".into(),
            queue: "orders".into(),
            product_field: None,
            management_url: None,
        };
        let problems = form.to_file().unwrap_err();
        assert_eq!(problems[0].field, Field::InflightUrl);
        assert!(!problems[0].detail.contains("pw"), "the password is not repeated: {}", problems[0].detail);
    }

    #[test]
    fn an_unpaid_status_without_a_reserved_column_marks_both_fields_with_the_rule() {
        let mut form = course();
        form.orders.as_mut().unwrap().statuses[0].meaning = StatusMeaning::Reserving;
        let problems = form.to_file().unwrap_err();
        let marked: Vec<(Field, Problem)> = problems.iter().map(|p| (p.field, p.problem)).collect();
        assert_eq!(
            marked,
            [(Field::OrdersStatuses, Problem::Rule), (Field::StockReserved, Problem::Rule)],
            "{problems:?}"
        );
        assert!(problems[0].detail.contains("reserving statuses need a [stock] reserved column"), "{problems:?}");
    }

    #[test]
    fn a_form_with_nothing_to_read_is_said_on_the_stock_table() {
        // The window shows it on the whole form when the stock section is not on screen.
        let mut form = course();
        form.stock = None;
        form.redis = None;
        let problems = form.to_file().unwrap_err();
        assert_eq!(problems.iter().map(|p| p.field).collect::<Vec<_>>(), [Field::StockTable], "{problems:?}");
        assert!(problems[0].detail.contains("no [stock] table"), "{problems:?}");
    }

    #[test]
    fn a_key_template_left_empty_is_said_needed() {
        let mut form = course();
        form.redis =
            Some(RedisFields { stock: RedisStockFields::Counter { template: " ".into(), clamp: false }, buyers: None });
        let problems = form.to_file().unwrap_err();
        assert_eq!(
            problems.iter().map(|p| (p.field, p.problem)).collect::<Vec<_>>(),
            [(Field::RedisStock, Problem::Empty)],
            "{problems:?}"
        );
    }
}
