fn main() -> std::process::ExitCode {
    quicsetup::shell::main(dtp::run_argv)
}
