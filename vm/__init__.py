"""The priolab VM: Debian's stock kernel under qemu TCG, for the tc backend, Open vSwitch and
the Ansible tc role (see vm/README.md)."""
