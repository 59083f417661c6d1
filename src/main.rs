//! The `nodemaint` command: parse, call the library, render; and `serve`,
//! the REST API (`server/`). No SQL and no authority decisions live here.

mod cli;
mod server;

use clap::Parser;
use std::process::ExitCode;

/// Exit code for bad command-line arguments (as ironic-dbsync uses it).
const EXIT_USAGE: u8 = 127;

/// A command whose output is piped into `head` stops quietly when the pipe
/// closes, as `ls | head` does. Rust ignores SIGPIPE so that writes fail with
/// EPIPE instead, and `println!` turns that failure into a panic. The CLI
/// prints only after its work is committed, so dying on the signal loses
/// nothing; `serve` keeps the default (a client closing its socket is not
/// a reason to stop).
fn restore_sigpipe() {
    // SAFETY: called before any other thread exists; SIG_DFL is a valid handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    // An empty NODEMAINT_CONFIG or NODEMAINT_DATABASE_URL means "none", as an
    // unset one does; clap would report a missing value instead.
    for var in ["NODEMAINT_CONFIG", "NODEMAINT_DATABASE_URL"] {
        if std::env::var_os(var).is_some_and(|v| v.is_empty()) {
            // SAFETY: no other thread exists yet.
            unsafe { std::env::remove_var(var) };
        }
    }
    let args = match cli::args::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // A server's request log is its output: info by default.
    let serving = matches!(args.command, cli::args::Command::Serve(_));
    if !serving {
        restore_sigpipe();
    }
    cli::init_logging(if serving { args.global.verbose.max(1) } else { args.global.verbose }, args.global.quiet);
    // A bug must still read as one line, not a backtrace dump (a panic inside
    // an upgrade check is also reported as that check's Failure).
    std::panic::set_hook(Box::new(|info| {
        tracing::error!("internal error: {}", nodemaint::error::one_line(&info.to_string()))
    }));
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(nodemaint::Error::Config(String::new()).exit_code());
        }
    };
    ExitCode::from(runtime.block_on(cli::run(args)))
}
