//! The `ding-eval` binary: a thin shell around [`ding::eval::cli`].

fn main() -> std::process::ExitCode {
    ding::eval::cli::main()
}
