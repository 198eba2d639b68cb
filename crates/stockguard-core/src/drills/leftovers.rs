//! What a drill leaves behind once its run is over, cleared: a drill touches only its own rig,
//! and not for longer than its run (issue 26).
//!
//! A runner that finishes removes its engines' heartbeats itself ([`forget_heartbeats`]). A
//! runner killed at any moment cannot: its run stays RUNNING with a heartbeat that only ages,
//! its rig's switch row (`rig:<run id>`) stays where its breakers put it (DEGRADED), its
//! products' Redis keys and its engines' heartbeats stay. The runner's lease is its heartbeat:
//! once that is older than [`super::STALE_AFTER`], the next command that looks (`drill run`,
//! `drill status`, `degrade status`, the window's drill list) calls [`sweep`], which ends the
//! run `DEAD` (audited), leads its rig's row back to NORMAL (a switch change, audited), and a
//! person's row of one of its products too, and removes its keys and heartbeats. A runner that
//! finishes leads those rows back itself ([`lead_back_rows_of`]). A runner that was only stalled past its lease finds its
//! run ended on its next heartbeat and stops, as a lease holder does.
//!
//! None of it reaches the sale: a rig's row covers only its own products, which no engine sells
//! once the run is over, and heartbeats are removed through the view
//! `ended_rig_heartbeats`, which shows (and so lets anyone delete) only the heartbeats of a
//! drill's engines whose run has ended, never a sale engine's nor a running drill's.

use std::time::Duration;

use serde::Serialize;
use sqlx::MySqlPool;

use super::runs::DrillRunError;
use crate::audit::{self, AuditEntry};
use crate::connect::Connections;
use crate::switch::store::{self, Changer};
use crate::switch::{Mode, Scope, SwitchError};

/// What one [`sweep`] cleared.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Swept {
    /// Runs ended `DEAD`: their runner's heartbeat outlived its lease.
    pub dead: Vec<u64>,
    /// Ended runs whose rig's row was led back to NORMAL.
    pub rigs_led_back: Vec<u64>,
    /// Ended runs' products whose own row (a person's) was led back to NORMAL.
    pub products_led_back: Vec<u64>,
    /// Heartbeats of ended runs' engines removed.
    pub heartbeats: u64,
}

impl Swept {
    pub fn is_empty(&self) -> bool {
        self.dead.is_empty()
            && self.rigs_led_back.is_empty()
            && self.products_led_back.is_empty()
            && self.heartbeats == 0
    }
}

/// Clears what ended and dead drill runs left: every RUNNING run whose heartbeat is older than
/// `stale_after` is ended `DEAD` (its products' Redis keys removed), every ended run's rig row
/// that is not NORMAL is set NORMAL (and a person's row of one of its products), and every ended
/// run's engine heartbeats are removed.
/// Audited (the run's end and each switch change).
///
/// Only someone who may operate the sale sweeps; for anyone else (a viewer, an approver, a
/// read-only profile) this does nothing and says so with an empty [`Swept`]: their look shows
/// the dead run as dead all the same.
pub async fn sweep(conns: &Connections, stale_after: Duration) -> Result<Swept, DrillRunError> {
    let Ok(changer) = Changer::person(&conns.settings) else {
        return Ok(Swept::default());
    };
    let dead = end_dead_runs(conns, stale_after).await?;
    let (rigs_led_back, products_led_back) = lead_back_ended_rows(&conns.mysql, &changer, None).await?;
    let heartbeats = remove_heartbeats(&conns.mysql, None).await?;
    Ok(Swept { dead, rigs_led_back, products_led_back, heartbeats })
}

/// [`sweep`] with the runner's lease ([`super::STALE_AFTER`]), as a command that looks calls it
/// before it reads: a sweep that fails is a warning in the log and keeps nothing from the look
/// that follows (which shows a dead run as dead all the same).
pub async fn clear_leftovers(conns: &Connections) -> Swept {
    match sweep(conns, super::STALE_AFTER).await {
        Ok(swept) => {
            if !swept.is_empty() {
                tracing::info!(?swept, "cleared what ended drill runs left");
            }
            swept
        }
        Err(e) => {
            tracing::warn!(error = %e, "what ended drill runs left could not be cleared");
            Swept::default()
        }
    }
}

/// Removes the heartbeats of an ended run's engines (the runner's last step, once its engines
/// are stopped and its run is finished). A run still RUNNING keeps them: the view shows none.
pub async fn forget_heartbeats(pool: &MySqlPool, run_id: u64) -> Result<u64, DrillRunError> {
    remove_heartbeats(pool, Some(run_id)).await
}

/// Deletes through `ended_rig_heartbeats` the rows it shows (of one run, or of every ended
/// run), by primary key: read first without locking, so a look with nothing to clear takes no
/// lock on the engines' heartbeats.
async fn remove_heartbeats(pool: &MySqlPool, run: Option<u64>) -> Result<u64, DrillRunError> {
    let home = run.map(|r| Scope::Rig(r).key());
    let ended: Vec<String> =
        sqlx::query_scalar("SELECT instance_id FROM ended_rig_heartbeats WHERE ? IS NULL OR home = ?")
            .bind(&home)
            .bind(&home)
            .fetch_all(pool)
            .await?;
    let mut removed = 0;
    for instance in ended {
        removed += sqlx::query("DELETE FROM ended_rig_heartbeats WHERE instance_id = ?")
            .bind(instance)
            .execute(pool)
            .await?
            .rows_affected();
    }
    Ok(removed)
}

/// Ends DEAD each running run whose heartbeat is stale; returns those ended here.
async fn end_dead_runs(conns: &Connections, stale_after: Duration) -> Result<Vec<u64>, DrillRunError> {
    let stale_us = stale_after.as_micros() as u64;
    let stale_runs: Vec<u64> = sqlx::query_scalar(
        "SELECT id FROM drill_runs WHERE status = 'RUNNING' \
         AND (heartbeat_at IS NULL OR heartbeat_at <= NOW(3) - INTERVAL ? MICROSECOND) ORDER BY id",
    )
    .bind(stale_us)
    .fetch_all(&conns.mysql)
    .await?;
    let mut ended = Vec::new();
    for run in stale_runs {
        let reason = format!(
            "its runner stopped without finishing: no heartbeat for more than {:.1} s",
            stale_after.as_secs_f64()
        );
        let mut tx = conns.mysql.begin().await?;
        // The staleness is asked again in the update: a runner that beat meanwhile keeps its run.
        let done = sqlx::query(
            "UPDATE drill_runs SET status = 'DEAD', finished_at = NOW(3), summary = JSON_OBJECT('reason', ?) \
             WHERE id = ? AND status = 'RUNNING' \
             AND (heartbeat_at IS NULL OR heartbeat_at <= NOW(3) - INTERVAL ? MICROSECOND)",
        )
        .bind(&reason)
        .bind(run)
        .bind(stale_us)
        .execute(&mut *tx)
        .await?;
        if done.rows_affected() == 0 {
            continue;
        }
        let entry = AuditEntry::by(
            &conns.settings,
            "drill.dead",
            &format!("drill:{run}"),
            &reason,
            "DEAD",
            serde_json::json!({ "run": run }),
        );
        audit::record(&mut *tx, &entry).await?;
        tx.commit().await?;
        take_keys_off(conns, run).await?;
        ended.push(run);
    }
    Ok(ended)
}

/// The dead run's products' Redis keys, as its runner would have removed them.
async fn take_keys_off(conns: &Connections, run: u64) -> Result<(), DrillRunError> {
    let products: Vec<u64> = sqlx::query_scalar("SELECT product_id FROM inventory WHERE rig = ? ORDER BY product_id")
        .bind(run)
        .fetch_all(&conns.mysql)
        .await?;
    let mut redis = conns.redis.clone();
    for product in products {
        let _: () = redis::cmd("DEL")
            .arg(conns.keys.all_for_product(product))
            .query_async(&mut redis)
            .await
            .map_err(|source| DrillRunError::RigKeys { run, source })?;
    }
    Ok(())
}

/// Sets NORMAL every ended run's rows that are not (of one run, or of every ended run): its
/// rig's row, and any product row of its rig's products (a person's `degrade on --product` of
/// a rig product during the run: issue 51, such a row stayed after the run). Their products
/// are sold by no engine any more, so the rows rule nothing. Each is a switch change, audited;
/// a row changed meanwhile is left to whoever changed it. Answers the runs whose rig row and
/// the products whose row was led back.
async fn lead_back_ended_rows(
    pool: &MySqlPool,
    changer: &Changer,
    run: Option<u64>,
) -> Result<(Vec<u64>, Vec<u64>), DrillRunError> {
    let rows: Vec<(u64, String, u64, String)> = sqlx::query_as(
        "SELECT r.id, d.scope, d.revision, CAST(r.status AS CHAR) FROM degrade_switch d \
         JOIN drill_runs r ON d.scope = CONCAT('rig:', r.id) \
         WHERE r.status <> 'RUNNING' AND d.mode <> 'NORMAL' AND (? IS NULL OR r.id = ?) \
         UNION ALL \
         SELECT r.id, d.scope, d.revision, CAST(r.status AS CHAR) FROM degrade_switch d \
         JOIN inventory i ON i.product_id = d.product_id JOIN drill_runs r ON r.id = i.rig \
         WHERE r.status <> 'RUNNING' AND d.mode <> 'NORMAL' AND (? IS NULL OR r.id = ?) \
         ORDER BY 1, 2",
    )
    .bind(run)
    .bind(run)
    .bind(run)
    .bind(run)
    .fetch_all(pool)
    .await?;
    let (mut rigs, mut products) = (Vec::new(), Vec::new());
    for (run, key, revision, status) in rows {
        let scope: Scope = key.parse().map_err(|_| DrillRunError::RigRow {
            run,
            source: Box::new(SwitchError::Corrupt(format!("the scope {key:?} of a row of its rig"))),
        })?;
        let reason = match scope {
            Scope::Product(p) => {
                format!("drill run {run} ended {status}: the row of its rig's product {p} lapses with it")
            }
            _ => format!("drill run {run} ended {status}: its rig's row lapses with it"),
        };
        match store::set_if(pool, changer, scope, Mode::Normal, &reason, revision).await {
            Ok(_) => match scope {
                Scope::Product(p) => products.push(p),
                _ => rigs.push(run),
            },
            Err(SwitchError::ChangedMeanwhile { .. }) => {}
            Err(e) => return Err(DrillRunError::RigRow { run, source: Box::new(e) }),
        }
    }
    Ok((rigs, products))
}

/// What a finished run leaves in the switch, led back by its runner as it ends (its rig's row
/// when the run did not lead it back itself, a person's row of one of its products), through
/// the switch, audited. Only someone who may change the switch does it (the runner may);
/// otherwise the next [`sweep`] does.
pub async fn lead_back_rows_of(conns: &Connections, run_id: u64) -> Result<Swept, DrillRunError> {
    let Ok(changer) = Changer::person(&conns.settings) else {
        return Ok(Swept::default());
    };
    let (rigs_led_back, products_led_back) = lead_back_ended_rows(&conns.mysql, &changer, Some(run_id)).await?;
    Ok(Swept { rigs_led_back, products_led_back, ..Swept::default() })
}
