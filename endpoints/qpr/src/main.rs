fn main() -> std::process::ExitCode {
    quicsetup::shell::main(qpr::run_argv)
}
