use clap::Parser;

fn main() {
    let cli = iolens::cli::Cli::parse();
    std::process::exit(iolens::cmd::dispatch(cli));
}
