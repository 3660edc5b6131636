//! `epimem`: the command line of the epimem episodic memory engine.

fn main() -> std::process::ExitCode {
    epimem::run_cli()
}
