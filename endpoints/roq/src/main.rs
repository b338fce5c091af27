fn main() -> std::process::ExitCode {
    quicsetup::shell::main(roq::run_argv)
}
