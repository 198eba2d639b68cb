//! `engine serve` listens with room for a sale's opening burst: while the engine accepts
//! nothing (stopped with SIGSTOP), 400 buyers' connections still complete their handshake,
//! where the standard library's backlog of 128 would drop the SYNs past it and leave those
//! buyers a second's retransmission (BENCHMARKS.md, "What vouching costs", run 14).

use crate::commands::sale_env;
use crate::support;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The engine process: continued and killed on drop, whatever the test did to it.
struct Engine(Child);

impl Engine {
    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.0.id() as i32), signal).expect("the signal is sent");
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        let _ = kill(Pid::from_raw(self.0.id() as i32), Signal::SIGCONT);
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[sqlx::test(migrations = "./migrations")]
async fn an_engine_that_accepts_nothing_for_a_moment_still_holds_a_burst_of_400_connections(pool: sqlx::MySqlPool) {
    let env = sale_env(&pool).await;
    let addr = format!("127.0.0.1:{}", support::free_port());
    let engine = Engine(
        Command::new(env!("CARGO_BIN_EXE_stockguard"))
            .args(["engine", "serve", "--listen", &addr])
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let client = reqwest::Client::new();
    support::waits::wait_for("the engine serves", Duration::from_secs(30), async || {
        client.get(format!("http://{addr}/health")).send().await.is_ok_and(|r| r.status().is_success())
    })
    .await;

    engine.signal(Signal::SIGSTOP);
    let burst = (0..400).map(|_| tokio::net::TcpStream::connect(&addr));
    let mut connected = tokio::time::timeout(Duration::from_secs(30), futures_util::future::try_join_all(burst))
        .await
        .expect("all 400 connections completed while the engine accepted none (none waited for a SYN retry)")
        .expect("connect");
    engine.signal(Signal::SIGCONT);

    // The last of the burst is served once the engine runs again.
    let last = connected.last_mut().unwrap();
    last.write_all(b"GET /health HTTP/1.1\r\nHost: engine\r\nConnection: close\r\n\r\n").await.unwrap();
    let mut answer = String::new();
    last.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
