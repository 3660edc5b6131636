//! `epimem-hook`: the coding agents' hook alone (what `epimem hook` does), in a binary that starts
//! faster because it links only what a hook runs.

fn main() -> std::process::ExitCode {
    epimem::run_hook()
}
