//! One run: the network, every process as a task started at its virtual time, the stop rule
//! (all `runs_to_end` processes exited, or the deadline: the rest are cancelled), and the
//! numbers for the report.

use crate::env::{self, Clock, Console};
use crate::registry;
use crate::spec::{program_name, resolve_argv, Spec};
use simnet::{SimNet, SimNetConfig, StatsOut};
use std::cell::RefCell;
use std::io;
use std::path::Path;
use std::rc::Rc;
use tokio::sync::Notify;
use tokio::task::{spawn_local, JoinHandle, LocalSet};
use tokio::time::sleep_until;

/// What happened to one process (times in virtual ns since the origin).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProcessOutcome {
    pub started_at_ns: Option<u64>,
    pub ended_at_ns: Option<u64>,
    pub exit_code: Option<u8>,
    pub cancelled: bool,
}

#[derive(Debug)]
pub struct Outcome {
    pub virtual_ns: u64,
    pub processes: Vec<ProcessOutcome>,
    pub link: simnet::LinkReport,
    pub errors: Vec<String>,
}

/// Notifies the run when a process's task ends, however it ends (exit, panic, cancel).
struct EndGuard(Rc<Notify>);

impl Drop for EndGuard {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// How often a process with `wait_for_file` looks for its file (virtual time).
const WAIT_FOR_FILE_POLL: std::time::Duration = std::time::Duration::from_millis(1);

fn s_to_ns(s: f64) -> u64 {
    (s * 1e9).round() as u64
}

/// Run `spec` over `link` to its end.
pub fn run(spec: &Spec, link: linkem::Config) -> io::Result<Outcome> {
    let srt = simnet::build()?;
    let cfg = SimNetConfig {
        link,
        nodes: spec.nodes.values().cloned().collect(),
        stats: Some(StatsOut {
            path: spec.link.stats.clone(),
            interval_ms: spec.link.stats_interval_ms,
        }),
        packet_log: spec.link.packet_log.clone(),
    };
    let net = SimNet::new(&srt, &cfg)?;
    if let Some(c) = &spec.capture {
        net.capture(&simnet::CaptureSpec {
            files: c
                .files
                .iter()
                .map(|(node, path)| (spec.nodes[node].addr, path.clone()))
                .collect(),
            snaplen_bytes: c.snaplen_bytes,
            epoch_unix_ns: spec.epoch_unix_ns,
        })?;
    }
    let origin = srt.origin;
    let local = LocalSet::new();
    srt.rt.block_on(local.run_until(async move {
        // Made at the origin, before anything ran: one Unix time base for every process.
        let clock = Clock::virtual_with(spec.epoch_unix_ns, simnet::clock::now);
        let outcomes = Rc::new(RefCell::new(vec![
            ProcessOutcome::default();
            spec.processes.len()
        ]));
        let ended = Rc::new(Notify::new());
        let mut errors = Vec::new();
        let mut handles: Vec<Option<JoinHandle<()>>> = Vec::new();
        for (i, p) in spec.processes.iter().enumerate() {
            let app = registry::lookup(program_name(&p.argv[0])).expect("checked by the spec");
            let node = net
                .node(spec.nodes[&p.node].addr)
                .expect("every node is in the net");
            let console = match open_console(&p.stdout, &p.stderr) {
                Ok(c) => c,
                Err(e) => {
                    errors.push(format!("{} never started: {e}", p.name));
                    handles.push(None);
                    continue;
                }
            };
            let env = env::make(clock, node, console, spec.seed, &p.name);
            let argv = resolve_argv(&p.argv, &p.cwd);
            let (outcomes, guard) = (outcomes.clone(), EndGuard(ended.clone()));
            let start = s_to_ns(p.start_at_s);
            let wait_for = p.wait_for_file.clone();
            handles.push(Some(spawn_local(async move {
                let _guard = guard;
                sleep_until(origin.at(start)).await;
                if let Some(f) = wait_for {
                    while !f.exists() {
                        tokio::time::sleep(WAIT_FOR_FILE_POLL).await;
                    }
                }
                outcomes.borrow_mut()[i].started_at_ns = Some(origin.now_ns());
                let code = app(argv, env).await;
                let mut o = outcomes.borrow_mut();
                o[i].exit_code = Some(code);
                o[i].ended_at_ns = Some(origin.now_ns());
            })));
        }
        let deadline = origin.at(s_to_ns(spec.deadline_s));
        let enders: Vec<usize> = (0..spec.processes.len())
            .filter(|&i| spec.processes[i].runs_to_end)
            .collect();
        loop {
            let done = |i: &usize| handles[*i].as_ref().is_none_or(|h| h.is_finished());
            if !enders.is_empty() && enders.iter().all(done) {
                break;
            }
            tokio::select! {
                _ = ended.notified() => {}
                _ = sleep_until(deadline) => break,
            }
        }
        let virtual_ns = origin.now_ns();
        for (i, h) in handles.into_iter().enumerate() {
            let Some(h) = h else { continue };
            let name = &spec.processes[i].name;
            if !h.is_finished() {
                h.abort();
                let mut o = outcomes.borrow_mut();
                if o[i].started_at_ns.is_some() {
                    o[i].cancelled = true;
                    o[i].ended_at_ns = Some(virtual_ns);
                } else {
                    errors.push(format!("{name} never started (wait_for_file or deadline)"));
                }
            }
            if let Err(e) = h.await {
                if e.is_panic() {
                    errors.push(format!(
                        "{name} panicked: {}",
                        panic_message(e.into_panic())
                    ));
                }
            }
        }
        let link = net.finish()?;
        errors.extend(link.errors.iter().cloned());
        let processes = outcomes.borrow().clone();
        Ok(Outcome {
            virtual_ns,
            processes,
            link,
            errors,
        })
    }))
}

/// A process's console, its folders created (as the agent creates them).
fn open_console(stdout: &Path, stderr: &Path) -> io::Result<Console> {
    for p in [stdout, stderr] {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
    }
    Console::files(stdout, stderr)
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}
