//! What a sale's schema says about its stock and its orders, guessed from names and comments
//! the way a person reading it would: the stock table is the one with a units-left column
//! (`stock`, `available_stock`, `stock_count`, or a comment with 库存), its orders table names
//! that table's product and has a status (its own, or its parent order's). Pure: the schema
//! comes in as read ([`Table`]), the guesses go out with what could not be decided said.

/// A column as `information_schema` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    pub data_type: String,
    pub primary: bool,
    pub comment: String,
}

/// A table and its columns, in their order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub name: String,
    pub columns: Vec<Column>,
}

impl Table {
    fn column(&self, names: &[&str]) -> Option<&Column> {
        names.iter().find_map(|n| self.columns.iter().find(|c| c.name.eq_ignore_ascii_case(n)))
    }

    fn primary(&self) -> Option<&Column> {
        let mut keys = self.columns.iter().filter(|c| c.primary);
        match (keys.next(), keys.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    fn is_orders(&self) -> bool {
        self.name.to_lowercase().contains("order")
    }
}

fn numeric(c: &Column) -> bool {
    matches!(
        c.data_type.to_lowercase().as_str(),
        "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint" | "decimal"
    )
}

/// Units-left columns, most telling first.
const REMAINING: &[&str] = &[
    "available_stock",
    "remaining_stock",
    "stock_left",
    "left_stock",
    "stock_count",
    "stock_num",
    "stock",
    "remaining",
    "inventory",
];
const INITIAL: &[&str] = &["initial_stock", "init_stock", "total_stock", "stock_total", "original_stock"];
const RESERVED: &[&str] = &["lock_stock", "locked_stock", "reserved_stock", "frozen_stock", "reserved"];
const NAME: &[&str] = &["title", "name", "goods_name", "item_title", "product_name", "item_name"];
const STATUS: &[&str] = &["status", "order_status", "state", "order_state"];
const CREATED: &[&str] =
    &["create_time", "created_at", "gmt_create", "create_date", "created_time", "order_time", "created"];
const USER: &[&str] = &["user_id", "member_id", "uid", "buyer_id", "customer_id"];
const QUANTITY: &[&str] =
    &["quantity", "product_quantity", "buy_count", "goods_count", "buy_num", "count", "num", "amount_units"];
const PRODUCT_IDS: &[&str] = &["product_id", "goods_id", "item_id", "sku_id", "voucher_id", "ticket_id"];

/// The stock table as guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StockGuess {
    pub table: String,
    pub product: String,
    pub remaining: String,
    pub reserved: Option<String>,
    /// `None`: no initial stock stored (a baseline is needed).
    pub initial: Option<String>,
    pub name: Option<String>,
}

/// The orders table as guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrdersGuess {
    pub table: String,
    pub product: String,
    pub quantity_column: Option<String>,
    pub status: String,
    pub order_id: Option<String>,
    pub created: Option<String>,
    pub user: Option<String>,
    /// The parent order holding the status: `(table, on, key)`.
    pub join: Option<(String, String, String)>,
}

/// Everything guessed from the schema, and what was not decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SchemaGuess {
    pub stock: Option<StockGuess>,
    pub orders: Option<OrdersGuess>,
    pub undecided: Vec<String>,
}

/// The units-left column of a table: by name first, then by a comment that says stock.
fn remaining_column(t: &Table) -> Option<(usize, &Column)> {
    if let Some((rank, c)) =
        REMAINING.iter().enumerate().find_map(|(i, n)| t.column(&[n]).filter(|c| numeric(c)).map(|c| (i, c)))
    {
        return Some((rank, c));
    }
    t.columns
        .iter()
        .filter(|c| numeric(c) && !INITIAL.iter().chain(RESERVED).any(|n| c.name.eq_ignore_ascii_case(n)))
        .find(|c| {
            c.comment.contains("库存") || c.comment.contains("剩余") || c.comment.to_lowercase().contains("stock")
        })
        .map(|c| (REMAINING.len(), c))
}

/// Reads the schema as a person would and says what it takes for stock and orders.
pub fn guess(tables: &[Table]) -> SchemaGuess {
    let mut out = SchemaGuess::default();
    let mut candidates: Vec<(usize, &Table, &Column)> = tables
        .iter()
        .filter(|t| !t.is_orders())
        .filter_map(|t| remaining_column(t).map(|(rank, c)| (rank, t, c)))
        .collect();
    candidates.sort_by_key(|(rank, t, _)| (*rank, t.name.clone()));
    let Some(&(_, stock_table, remaining)) = candidates.first() else {
        out.undecided.push(
            "no table with a units-left column (stock, available_stock, stock_count, or a comment saying 库存): \
             give [stock] by hand, or [sale] products for a sale kept in Redis only"
                .into(),
        );
        return out;
    };
    if candidates.len() > 1 {
        let others: Vec<_> = candidates[1..].iter().map(|(_, t, c)| format!("{}.{}", t.name, c.name)).collect();
        out.undecided.push(format!(
            "took {}.{} for the units left; also possible: {}",
            stock_table.name,
            remaining.name,
            others.join(", ")
        ));
    }
    let orders = orders_for(tables, stock_table, &mut out.undecided);
    // The stock table's product column: the one its orders name, else its primary key.
    let product = orders
        .as_ref()
        .and_then(|o| stock_table.column(&[&o.product]))
        .or_else(|| stock_table.primary())
        .or_else(|| stock_table.column(PRODUCT_IDS))
        .map(|c| c.name.clone());
    let Some(product) = product else {
        out.undecided.push(format!("{}: no single primary key to take for the product", stock_table.name));
        return out;
    };
    out.stock = Some(StockGuess {
        table: stock_table.name.clone(),
        product,
        remaining: remaining.name.clone(),
        reserved: stock_table.column(RESERVED).map(|c| c.name.clone()),
        initial: stock_table.column(INITIAL).map(|c| c.name.clone()),
        name: stock_table.column(NAME).map(|c| c.name.clone()),
    });
    if orders.is_none() {
        out.undecided.push(format!(
            "no orders table naming {}'s product with a status: give [orders] by hand",
            stock_table.name
        ));
    }
    out.orders = orders;
    out
}

/// The product column an orders table names, and another it might as well be (said
/// `UNDECIDED`): the stock table's own id by name first (`voucher_id`); then, for a stock
/// table keyed by a bare `id`, one built from its name (`pms_sku_stock` -> `product_sku_id`),
/// before a `_id` column both tables share, which may name what the stock row belongs to
/// (a mall's `product_id` is the product of a stock row per SKU); then the usual ones.
fn product_column<'a>(orders: &'a Table, stock: &Table) -> Option<(&'a Column, Option<&'a Column>)> {
    if let Some(own) = stock.primary().filter(|p| p.name != "id").and_then(|p| orders.column(&[&p.name])) {
        return Some((own, None));
    }
    let shared = stock
        .columns
        .iter()
        .filter(|c| !c.primary && c.name.to_lowercase().ends_with("_id"))
        .find_map(|c| orders.column(&[&c.name]));
    let ignored = ["tb", "t", "pms", "stock", "seckill", "flash", "miaosha"];
    let stems: Vec<String> = stock
        .name
        .to_lowercase()
        .split('_')
        .filter(|w| !w.is_empty() && !ignored.contains(w))
        .map(|w| format!("{w}_id"))
        .collect();
    let named = orders.columns.iter().find(|c| stems.iter().any(|s| c.name.to_lowercase().ends_with(s.as_str())));
    let by_bare_id = stock.primary().is_some_and(|p| p.name == "id");
    let (first, second) = if by_bare_id { (named, shared) } else { (shared, named) };
    match (first, second) {
        (Some(a), Some(b)) if a.name != b.name => Some((a, Some(b))),
        (Some(a), _) | (None, Some(a)) => Some((a, None)),
        (None, None) => orders.column(PRODUCT_IDS).map(|c| (c, None)),
    }
}

fn orders_for(tables: &[Table], stock: &Table, undecided: &mut Vec<String>) -> Option<OrdersGuess> {
    let mut direct = Vec::new();
    let mut joined = Vec::new();
    for t in tables.iter().filter(|t| t.is_orders() && t.name != stock.name) {
        let Some((product, or)) = product_column(t, stock) else { continue };
        if let Some(or) = or {
            undecided.push(format!(
                "took {}.{} for the product of a {} row; also possible: {}.{}",
                t.name, product.name, stock.name, t.name, or.name
            ));
        }
        let quantity_column = t
            .column(QUANTITY)
            .or_else(|| t.columns.iter().find(|c| c.name.to_lowercase().ends_with("_quantity")))
            .filter(|c| numeric(c))
            .map(|c| c.name.clone());
        if let Some(status) = t.column(STATUS) {
            direct.push(OrdersGuess {
                table: t.name.clone(),
                product: product.name.clone(),
                quantity_column,
                status: status.name.clone(),
                order_id: t.primary().map(|c| c.name.clone()),
                created: t.column(CREATED).map(|c| c.name.clone()),
                user: t.column(USER).map(|c| c.name.clone()),
                join: None,
            });
            continue;
        }
        // An order's items: the status is on the parent order, found by `order_id`.
        let Some(on) = t.column(&["order_id", "order_sn", "oid"]) else { continue };
        let parent = tables
            .iter()
            .find(|p| p.name != t.name && p.is_orders() && p.column(STATUS).is_some() && p.primary().is_some());
        if let (Some(parent), Some(key)) = (parent, parent.and_then(Table::primary)) {
            joined.push(OrdersGuess {
                table: t.name.clone(),
                product: product.name.clone(),
                quantity_column,
                status: parent.column(STATUS).expect("filtered").name.clone(),
                order_id: Some(on.name.clone()),
                created: parent.column(CREATED).map(|c| c.name.clone()),
                user: parent.column(USER).or_else(|| t.column(USER)).map(|c| c.name.clone()),
                join: Some((parent.name.clone(), on.name.clone(), key.name.clone())),
            });
        }
    }
    let mut found = direct.into_iter().chain(joined);
    let first = found.next()?;
    let rest: Vec<String> = found.map(|o| o.table).collect();
    if !rest.is_empty() {
        undecided.push(format!("took {} for the orders; also possible: {}", first.table, rest.join(", ")));
    }
    Some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(name: &str, cols: &[(&str, &str)]) -> Table {
        Table {
            name: name.into(),
            columns: cols
                .iter()
                .map(|(n, ty)| Column {
                    name: n.trim_start_matches('*').into(),
                    data_type: ty.to_string(),
                    primary: n.starts_with('*'),
                    comment: String::new(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_two_phase_lock_mall_is_read_with_its_items_joined_to_their_order() {
        let tables = [
            table(
                "pms_sku_stock",
                &[("*id", "bigint"), ("sku_code", "varchar"), ("stock", "int"), ("lock_stock", "int")],
            ),
            table(
                "oms_order",
                &[("*id", "bigint"), ("member_id", "bigint"), ("status", "int"), ("create_time", "datetime")],
            ),
            table(
                "oms_order_item",
                &[("*id", "bigint"), ("order_id", "bigint"), ("product_sku_id", "bigint"), ("product_quantity", "int")],
            ),
        ];
        let g = guess(&tables);
        let stock = g.stock.unwrap();
        assert_eq!((stock.table.as_str(), stock.product.as_str()), ("pms_sku_stock", "id"));
        assert_eq!((stock.remaining.as_str(), stock.reserved.as_deref()), ("stock", Some("lock_stock")));
        assert_eq!(stock.initial, None, "no initial stock: a baseline");
        let orders = g.orders.unwrap();
        assert_eq!(orders.table, "oms_order_item");
        assert_eq!(orders.product, "product_sku_id");
        assert_eq!(orders.quantity_column.as_deref(), Some("product_quantity"));
        assert_eq!(orders.join, Some(("oms_order".into(), "order_id".into(), "id".into())));
        assert_eq!((orders.created.as_deref(), orders.user.as_deref()), (Some("create_time"), Some("member_id")));
    }

    #[test]
    fn a_mall_whose_stock_is_per_sku_takes_the_sku_column_and_says_the_shared_product_id_is_possible() {
        // As the public mall has them: both tables carry the SPU's `product_id`.
        let tables = [
            table(
                "pms_sku_stock",
                &[("*id", "bigint"), ("product_id", "bigint"), ("stock", "int"), ("lock_stock", "int")],
            ),
            table("oms_order", &[("*id", "bigint"), ("member_id", "bigint"), ("status", "int")]),
            table(
                "oms_order_item",
                &[
                    ("*id", "bigint"),
                    ("order_id", "bigint"),
                    ("product_id", "bigint"),
                    ("product_sku_id", "bigint"),
                    ("product_quantity", "int"),
                ],
            ),
        ];
        let g = guess(&tables);
        assert_eq!(g.orders.as_ref().unwrap().product, "product_sku_id");
        assert_eq!(g.stock.as_ref().unwrap().product, "id", "the stock row is the SKU");
        assert!(
            g.undecided.iter().any(|u| u.contains("product_sku_id") && u.contains("oms_order_item.product_id")),
            "{:?}",
            g.undecided
        );
    }

    #[test]
    fn a_stored_initial_stock_and_a_shared_goods_id_are_taken() {
        let tables = [
            table("miaosha_goods", &[("*id", "bigint"), ("goods_id", "bigint"), ("stock_count", "int")]),
            table(
                "order_info",
                &[("*id", "bigint"), ("goods_id", "bigint"), ("goods_count", "int"), ("status", "tinyint")],
            ),
            table("flash_item", &[("*id", "bigint"), ("initial_stock", "int"), ("available_stock", "int")]),
        ];
        let g = guess(&tables);
        // available_stock is the more telling name: flash_item is taken, miaosha_goods said.
        let stock = g.stock.unwrap();
        assert_eq!((stock.table.as_str(), stock.initial.as_deref()), ("flash_item", Some("initial_stock")));
        assert!(g.undecided.iter().any(|u| u.contains("miaosha_goods.stock_count")), "{:?}", g.undecided);
        let only_miaosha = guess(&tables[..2]);
        assert_eq!(only_miaosha.stock.unwrap().product, "goods_id", "the column its orders name");
        assert_eq!(only_miaosha.orders.unwrap().quantity_column.as_deref(), Some("goods_count"));
    }

    #[test]
    fn a_comment_saying_stock_in_chinese_finds_the_column() {
        let mut t = table("shangpin", &[("*sp_id", "bigint"), ("shengyu", "int")]);
        t.columns[1].comment = "剩余库存".into();
        let g = guess(&[t]);
        assert_eq!(g.stock.unwrap().remaining, "shengyu");
        assert!(g.undecided.iter().any(|u| u.contains("no orders table")), "{:?}", g.undecided);
    }

    #[test]
    fn a_schema_without_stock_says_so() {
        let g = guess(&[table("users", &[("*id", "bigint"), ("name", "varchar")])]);
        assert!(g.stock.is_none() && g.orders.is_none());
        assert!(g.undecided[0].contains("no table with a units-left column"));
    }
}
