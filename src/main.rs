//! The `ding` binary: a thin shell around [`ding::cli`].

fn main() -> std::process::ExitCode {
    ding::cli::main()
}
