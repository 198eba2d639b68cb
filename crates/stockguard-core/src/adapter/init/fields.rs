//! A form checked against the sale, field by field: `adapter check` on the file the form
//! stands for, each thing it finds missing ([`Missing`]) said in the field that names it (an
//! unknown column in the column's field, a template that matches no key in the template's, a
//! queue that does not exist in the queue's), and the orders counted again per status with the
//! status column as it now is. Reads only.

use serde::Serialize;
use sqlx::MySqlPool;

use super::form::{
    Field, FieldProblem, InflightFields, Problem, ProposalForm, RedisStockFields, StatusMeaning, StatusRow,
};
use crate::adapter::check::{self, KeySample};
use crate::adapter::missing::Missing;
use crate::adapter::AdapterError;
use crate::redis_link::Link;

/// What the check of a form found.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FormCheck {
    /// The form, its statuses counted again (a status found since is added, holding a unit).
    pub form: ProposalForm,
    /// Empty when the form is an adapter file and everything it names exists.
    pub problems: Vec<FieldProblem>,
    /// A sampled key of each template, with its value.
    pub keys: Vec<KeySample>,
    /// The sale's products.
    pub products: usize,
    /// What waits in the in-flight source now.
    pub in_flight: Option<i64>,
}

impl FormCheck {
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks the form against the sale.
pub async fn check_form<C: Link>(
    form: &ProposalForm,
    sale_db: Option<&MySqlPool>,
    redis: Option<&C>,
) -> Result<FormCheck, AdapterError> {
    let mut out = FormCheck { form: form.clone(), problems: vec![], keys: vec![], products: 0, in_flight: None };
    let file = match form.to_file() {
        Ok(file) => file,
        Err(problems) => {
            out.problems = problems;
            return Ok(out);
        }
    };
    let report = check::check(&file, sale_db, redis).await?;
    out.problems = report.missing.iter().map(|m| in_its_field(form, m)).collect();
    (out.keys, out.products, out.in_flight) = (report.keys, report.products, report.in_flight);
    if let Some(orders) = out.form.orders.as_mut().filter(|_| !report.statuses.is_empty()) {
        orders.statuses = recounted(&orders.statuses, report.statuses.iter().map(|s| (s.status.as_str(), s.orders)));
    }
    Ok(out)
}

/// The statuses as counted now, each keeping what the person said it means; a status that
/// has no orders now is kept (with none), one found since is proposed as holding a unit.
fn recounted<'a>(rows: &[StatusRow], counted: impl Iterator<Item = (&'a str, i64)>) -> Vec<StatusRow> {
    let mut out: Vec<StatusRow> = counted
        .map(|(value, orders)| StatusRow {
            value: value.to_string(),
            orders,
            meaning: rows.iter().find(|r| r.value == value).map_or(StatusMeaning::Live, |r| r.meaning),
        })
        .collect();
    let gone: Vec<StatusRow> = rows
        .iter()
        .filter(|r| !out.iter().any(|o| o.value == r.value))
        .map(|r| StatusRow { orders: 0, ..r.clone() })
        .collect();
    out.extend(gone);
    out
}

/// The columns the form names, each with its field and its table.
fn columns(form: &ProposalForm) -> Vec<(Field, &str, &str)> {
    let mut out = Vec::new();
    if let Some(s) = &form.stock {
        let t = s.table.trim();
        out.extend([(Field::StockProduct, t, s.product.as_str()), (Field::StockRemaining, t, s.remaining.as_str())]);
        out.extend(s.reserved.as_deref().map(|c| (Field::StockReserved, t, c)));
        out.extend(s.name.as_deref().map(|c| (Field::StockName, t, c)));
        if let super::form::InitialField::Column { column } = &s.initial {
            out.push((Field::StockInitial, t, column.as_str()));
        }
    }
    if let Some(o) = &form.orders {
        let t = o.table.trim();
        // The status, created and user columns are the parent's when the status is joined.
        let parent = o.join.as_ref().map_or(t, |j| j.table.trim());
        out.extend([(Field::OrdersProduct, t, o.product.as_str()), (Field::OrdersStatus, parent, o.status.as_str())]);
        out.extend(o.quantity_column.as_deref().map(|c| (Field::OrdersQuantity, t, c)));
        out.extend(o.order_id.as_deref().map(|c| (Field::OrdersOrderId, t, c)));
        out.extend(o.created.as_deref().map(|c| (Field::OrdersCreated, parent, c)));
        out.extend(o.user.as_deref().map(|c| (Field::OrdersUser, parent, c)));
        if let Some(j) = &o.join {
            out.extend([(Field::OrdersJoinOn, t, j.on.as_str()), (Field::OrdersJoinKey, parent, j.key.as_str())]);
        }
    }
    out
}

/// The tables the form names, each with its field.
fn tables(form: &ProposalForm) -> Vec<(Field, &str)> {
    let mut out: Vec<(Field, &str)> = Vec::new();
    out.extend(form.stock.as_ref().map(|s| (Field::StockTable, s.table.trim())));
    if let Some(o) = &form.orders {
        out.push((Field::OrdersTable, o.table.trim()));
        out.extend(o.join.as_ref().map(|j| (Field::OrdersJoinTable, j.table.trim())));
    }
    out
}

/// The field a missing thing belongs in: the one that names it.
fn in_its_field(form: &ProposalForm, missing: &Missing) -> FieldProblem {
    let detail = missing.to_string();
    let (field, problem, name) = match missing {
        Missing::Table { table } => {
            let field = tables(form).into_iter().find(|(_, t)| *t == table.as_str()).map_or(Field::Whole, |(f, _)| f);
            (field, Problem::NoTable, table.as_str())
        }
        Missing::Column { table, column } => {
            let named = columns(form)
                .into_iter()
                .find(|(_, t, c)| *t == table.as_str() && c.trim().eq_ignore_ascii_case(column));
            (named.map_or(Field::Whole, |(f, ..)| f), Problem::NoColumn, column.as_str())
        }
        Missing::KeyTemplate { template, .. } => {
            let count = match form.redis.as_ref().map(|r| &r.stock) {
                Some(RedisStockFields::Buckets { count, .. }) => count.trim() == template.as_str(),
                _ => false,
            };
            (if count { Field::RedisBucketCount } else { Field::RedisStock }, Problem::NoKey, template.as_str())
        }
        Missing::Stream { stream } => (Field::InflightStream, Problem::NoStream, stream.as_str()),
        Missing::Group { group, .. } => (Field::InflightGroup, Problem::NoGroup, group.as_str()),
        Missing::StreamField { key, field, .. } => {
            let named = if key == "order_id_field" { Field::InflightOrderIdField } else { Field::InflightProductField };
            (named, Problem::Rule, field.as_str())
        }
        Missing::RabbitQueue { queue } => (Field::InflightQueue, Problem::NoQueue, queue.as_str()),
        Missing::RabbitUnreachable { url, .. } => (Field::InflightUrl, Problem::Unreachable, url.as_str()),
        Missing::NoProducts => {
            let field = if form.stock.is_some() { Field::StockTable } else { Field::Whole };
            (field, Problem::NoProducts, "")
        }
        Missing::NoSaleDb => (Field::SaleDb, Problem::Empty, ""),
        Missing::NoSaleRedis => (Field::SaleRedis, Problem::Empty, ""),
        Missing::BullmqQueue { queue, .. } => (Field::Whole, Problem::NoQueue, queue.as_str()),
        Missing::Row { table, .. } => (Field::Whole, Problem::Rule, table.as_str()),
        Missing::Undecided { what, .. } => (Field::Whole, Problem::Rule, what.as_str()),
    };
    // A source the form does not offer names nothing in it: said on the whole form.
    let field = match (field, &form.inflight) {
        (Field::InflightQueue | Field::InflightUrl, InflightFields::Rabbitmq { .. }) => field,
        (
            Field::InflightStream | Field::InflightGroup | Field::InflightProductField | Field::InflightOrderIdField,
            InflightFields::RedisStream { .. },
        ) => field,
        (Field::InflightQueue | Field::InflightUrl | Field::InflightStream | Field::InflightGroup, _) => Field::Whole,
        _ => field,
    };
    FieldProblem::new(field, problem, name, detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapter::init::form::{InitialField, OrdersFields, StockFields};

    fn form() -> ProposalForm {
        ProposalForm {
            name: "mall".into(),
            stock: Some(StockFields {
                table: "pms_sku_stock".into(),
                product: "id".into(),
                remaining: "stock".into(),
                reserved: Some("lock_stock".into()),
                initial: InitialField::Baseline,
                name: None,
            }),
            orders: Some(OrdersFields {
                table: "oms_order_item".into(),
                product: "product_sku_id".into(),
                quantity_column: Some("product_quantity".into()),
                status: "status".into(),
                statuses: vec![],
                order_id: None,
                created: Some("create_time".into()),
                user: None,
                join: Some(super::super::form::JoinFields {
                    table: "oms_order".into(),
                    on: "order_id".into(),
                    key: "id".into(),
                }),
            }),
            redis: None,
            inflight: InflightFields::None,
        }
    }

    #[test]
    fn a_missing_column_is_said_in_the_field_that_names_it_on_its_own_table() {
        let missing = |table: &str, column: &str| {
            in_its_field(&form(), &Missing::Column { table: table.into(), column: column.into() }).field
        };
        assert_eq!(missing("pms_sku_stock", "id"), Field::StockProduct);
        assert_eq!(missing("oms_order", "id"), Field::OrdersJoinKey, "the parent's key, not the stock's id");
        assert_eq!(missing("oms_order", "create_time"), Field::OrdersCreated);
        assert_eq!(missing("oms_order", "STATUS"), Field::OrdersStatus, "MySQL's names know no case");
        let table = in_its_field(&form(), &Missing::Table { table: "oms_order".into() });
        assert_eq!(
            (table.field, table.problem, table.name.as_str()),
            (Field::OrdersJoinTable, Problem::NoTable, "oms_order")
        );
    }

    #[test]
    fn a_queue_the_form_does_not_name_is_said_on_the_whole_form() {
        let problem = in_its_field(&form(), &Missing::RabbitQueue { queue: "q".into() });
        assert_eq!(problem.field, Field::Whole);
    }

    #[test]
    fn statuses_counted_again_keep_their_meaning_and_a_new_one_is_proposed_live() {
        let rows = [
            StatusRow { value: "4".into(), orders: 2, meaning: StatusMeaning::Released },
            StatusRow { value: "9".into(), orders: 1, meaning: StatusMeaning::Released },
        ];
        let now = recounted(&rows, [("1", 5), ("4", 3)].into_iter());
        let seen: Vec<(&str, i64, StatusMeaning)> =
            now.iter().map(|r| (r.value.as_str(), r.orders, r.meaning)).collect();
        assert_eq!(
            seen,
            [("1", 5, StatusMeaning::Live), ("4", 3, StatusMeaning::Released), ("9", 0, StatusMeaning::Released)]
        );
    }
}
