//! docbench-client: the throughput driver's compiled client loop. The protocol, the sessions
//! and the loop are the library's `docbench_gen::client`; this is the handshake on
//! stdin/stdout with the Python worker that started it.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::os::fd::FromRawFd;

use docbench_gen::client::driver::Loop;
use docbench_gen::client::{open_sessions, Config};

fn main() {
    // Never outlive the Python worker that started this (a killed run takes its clients along).
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    let mut out = BufWriter::with_capacity(1 << 20, unsafe { File::from_raw_fd(1) });
    let mut input = BufReader::new(std::io::stdin());
    let mut line = String::new();
    let fail = |out: &mut BufWriter<File>, message: String| -> ! {
        let _ = writeln!(out, "failed {}", message.replace('\n', " "));
        let _ = out.flush();
        std::process::exit(1);
    };
    if input.read_line(&mut line).unwrap_or(0) == 0 {
        fail(&mut out, "no configuration on stdin".to_string());
    }
    let config: Config = match serde_json::from_str(&line) {
        Ok(config) => config,
        Err(error) => fail(&mut out, format!("bad configuration: {error}")),
    };
    if config.client_ids.is_empty() || config.operations.is_empty() || config.interval_ns <= 0 {
        fail(&mut out, "no clients, operations or interval".to_string());
    }
    let (sessions, connect_ns) = match open_sessions(&config) {
        Ok(opened) => opened,
        Err(error) => fail(&mut out, error),
    };
    // (before `ready`, so that an unknown operation or distribution is a `failed` answer)
    let mut driver = match Loop::new(config, sessions) {
        Ok(driver) => driver,
        Err(error) => fail(&mut out, error),
    };
    let connect: Vec<String> = connect_ns.iter().map(|n| n.to_string()).collect();
    let _ = writeln!(out, "ready {}", connect.join(","));
    let _ = out.flush();
    line.clear();
    if input.read_line(&mut line).unwrap_or(0) == 0 {
        std::process::exit(0); // the worker went away before the start
    }
    let start_ns: i64 = match line.trim().strip_prefix("go ").and_then(|s| s.parse().ok()) {
        Some(start) => start,
        None => fail(&mut out, format!("expected `go <ns>`, got {:?}", line.trim())),
    };
    if let Err(error) = driver.run(start_ns, &mut out) {
        eprintln!("docbench-client: {error}");
        std::process::exit(1);
    }
}
