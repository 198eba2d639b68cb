//! The overview over an adapter (issue 29): its orders and their rate come from the reading's
//! own DB statement, so a sale whose orders keep their time on a parent table reads as well as
//! one that keeps it on the order rows, and the overview adds no query on the orders table.

use std::collections::HashMap;
use std::path::Path;

use stockguard_core::adapter::{self, AdapterFile, AdapterReading, OpenedSale};
use stockguard_core::overview::over_adapter::{self, OrderRate};
use stockguard_core::profile::{ConnectionSettings, EnvironmentKind};

use crate::sales::mall_lock::MallLockSale;

async fn reading(sale: &OpenedSale) -> Vec<AdapterReading> {
    adapter::read(&sale.file, &sale.links(), &HashMap::new(), &[]).await.expect("the sale reads over its adapter")
}

#[tokio::test]
async fn the_overview_of_a_sale_whose_order_times_sit_on_a_parent_table_counts_its_rows_and_their_rate() {
    let sale = MallLockSale::start(&[(31, 50), (32, 50)]).await;
    let file = AdapterFile::parse(&sale.adapter_toml_with_initial("50"), Path::new("sale.toml")).unwrap();
    let orders = file.orders.as_ref().expect("the mall names its orders");
    assert!(orders.join.is_some() && orders.created.is_some(), "its created column is the parent order's");
    let name = file.sale.name.clone();
    let settings = ConnectionSettings::from_urls(
        EnvironmentKind::Sandbox,
        &sale.db.url,
        &crate::support::redis_url(),
        "unused-by-an-adapter-sale",
    );
    let opened = OpenedSale::connect(file, &settings, None).await.expect("the sale opens");
    for member in 0..6 {
        sale.place(member, 31, 1).await.unwrap().expect("a unit is free");
    }

    let mut rate = OrderRate::default();
    let first = over_adapter::read(&opened, &reading(&opened).await, Vec::new(), &mut rate)
        .await
        .expect("the overview of a joined sale reads");
    assert_eq!(first.over_adapter.as_deref(), Some(name.as_str()), "it says whose sale it is");
    assert_eq!(first.orders.accepted, 6, "six order rows");
    assert_eq!((first.sale.products, first.sale.initial_units, first.sale.sold_units), (2, 100, 6));
    assert_eq!(first.orders.orders_per_s, None, "one reading is no rate yet");

    for member in 6..10 {
        sale.place(member, 32, 2).await.unwrap().expect("two units are free");
    }
    let second = over_adapter::read(&opened, &reading(&opened).await, Vec::new(), &mut rate)
        .await
        .expect("the overview reads again");
    assert_eq!(second.orders.accepted, 10, "four more rows");
    assert_eq!(second.sale.sold_units, 6 + 8, "of two units each");
    let (per_s, window) = (second.orders.orders_per_s, second.orders.window_s);
    let (per_s, window) = (per_s.expect("two readings apart give a rate"), window.expect("and its window"));
    assert!(window > 0.0 && (per_s * window - 4.0).abs() < 1e-6, "4 rows over {window} s, said as {per_s}/s");
    sale.cleanup().await;
}
