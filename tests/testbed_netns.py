"""A stand-in "physical" testbed for the Ansible tests: network namespaces running sshd.

    root ns: bridge tbbr<id> 10.77.0.1/24 (the management network the controller uses)
    tb<id>-guest  tbmgmt 10.77.0.11   tbtest 10.77.1.1/24 ─┐
    tb<id>-router tbmgmt 10.77.0.13   tbrg ────────────────┘  tbrh ─┐
    tb<id>-host   tbmgmt 10.77.0.12   tbtest 10.77.1.2/24 ──────────┘

Namespaces made by `ip netns add` share the root file system, so each node's sshd gets its
own config, host key and pid file in a temporary folder, and each node its own bin and run
folders (so files really have to travel between nodes, as on separate machines). Everything
is removed by `down()`, which the test fixture calls on every exit path.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROLES = ("guest", "host", "router")
MGMT_IP = {"guest": "10.77.0.11", "host": "10.77.0.12", "router": "10.77.0.13"}
TEST_IP = {"guest": "10.77.1.1", "host": "10.77.1.2"}


def sh(argv: list[str], check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=30)


@dataclass
class NetnsTestbed:
    tmp: Path
    tag: str = field(default_factory=lambda: f"{os.getpid() % 100000}")
    sshd: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def ns(self, role: str) -> str:
        return f"tb{self.tag}-{role}"

    @property
    def bridge(self) -> str:
        return f"tbbr{self.tag}"

    def nsrun(self, role: str, argv: list[str], check: bool = True) -> str:
        return sh(["ip", "netns", "exec", self.ns(role), *argv], check=check).stdout

    def node_dir(self, role: str) -> Path:
        return self.tmp / "nodes" / role

    # ------------------------------------------------------------------ up

    def up(self) -> None:
        if "10.77.0.1/" in sh(["ip", "-o", "addr"]).stdout:
            raise RuntimeError("10.77.0.1 is in use in the root namespace: another test run?")
        sh(["ip", "link", "add", self.bridge, "type", "bridge"])
        sh(["ip", "addr", "add", "10.77.0.1/24", "dev", self.bridge])
        sh(["ip", "link", "set", self.bridge, "up"])
        for role in ROLES:
            ns = self.ns(role)
            sh(["ip", "netns", "add", ns])
            self.nsrun(role, ["ip", "link", "set", "lo", "up"])
            peer = f"tbm{self.tag}{role[0]}"
            sh(["ip", "link", "add", peer, "type", "veth", "peer", "name", "tbmgmt", "netns", ns])
            sh(["ip", "link", "set", peer, "master", self.bridge, "up"])
            self.nsrun(role, ["ip", "addr", "add", f"{MGMT_IP[role]}/24", "dev", "tbmgmt"])
            self.nsrun(role, ["ip", "link", "set", "tbmgmt", "up"])
        # the test network: guest — router — host
        for end, rif in (("guest", "tbrg"), ("host", "tbrh")):
            sh(["ip", "link", "add", "tbtest", "netns", self.ns(end), "type", "veth",
                "peer", "name", rif, "netns", self.ns("router")])  # fmt: skip
            self.nsrun(end, ["ip", "addr", "add", f"{TEST_IP[end]}/24", "dev", "tbtest"])
            self.nsrun(end, ["ip", "link", "set", "tbtest", "up"])
            self.nsrun("router", ["ip", "link", "set", rif, "up"])
        self._keys()
        for role in ROLES:
            self._start_sshd(role)

    def _keys(self) -> None:
        sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.tmp / "id")])
        (self.tmp / "authorized_keys").write_text((self.tmp / "id.pub").read_text())
        os.chmod(self.tmp / "authorized_keys", 0o600)

    def _start_sshd(self, role: str) -> None:
        d = self.node_dir(role)
        (d / "bin").mkdir(parents=True, exist_ok=True)
        (d / "runs").mkdir(parents=True, exist_ok=True)
        (d / "ansible-tmp").mkdir(parents=True, exist_ok=True)
        key = d / "ssh_host_ed25519_key"
        sh(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)])
        cfg = d / "sshd_config"
        cfg.write_text(
            f"ListenAddress {MGMT_IP[role]}\nPort 22\nHostKey {key}\nPidFile {d / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {self.tmp / 'authorized_keys'}\n"
            "PermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "StrictModes no\nMaxStartups 100:30:200\nMaxSessions 100\n"
            "Subsystem sftp /usr/lib/openssh/sftp-server\n"
        )
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation directory
        log = open(d / "sshd.log", "wb")  # noqa: SIM115 (closed with the process)
        self.sshd[role] = subprocess.Popen(
            ["ip", "netns", "exec", self.ns(role), "/usr/sbin/sshd", "-D", "-e", "-f", str(cfg)],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.time() + 10
        while True:
            try:
                with socket.create_connection((MGMT_IP[role], 22), timeout=1):
                    return
            except OSError:
                if self.sshd[role].poll() is not None or time.time() > deadline:
                    raise RuntimeError(
                        f"sshd in {self.ns(role)} did not start: {(d / 'sshd.log').read_text()}"
                    ) from None
                time.sleep(0.1)

    # ------------------------------------------------------------------ inventory

    def inventory(self, **all_vars: object) -> Path:
        def node(role: str) -> dict[str, object]:
            d = self.node_dir(role)
            v: dict[str, object] = {
                "ansible_host": MGMT_IP[role],
                "priolab_bin_dir": str(d / "bin"),
                "priolab_run_root": str(d / "runs"),
                "ansible_remote_tmp": str(d / "ansible-tmp"),
            }
            if role == "router":
                v |= {"priolab_iface_guest": "tbrg", "priolab_iface_host": "tbrh"}
            else:
                v |= {"priolab_test_ip": TEST_IP[role], "priolab_test_iface": "tbtest"}
            return v

        inv = {
            "all": {
                "vars": {
                    "ansible_user": "root",
                    "ansible_ssh_private_key_file": str(self.tmp / "id"),
                    "ansible_python_interpreter": "/usr/bin/python3",
                    **all_vars,
                },
                "children": {r: {"hosts": {self.ns(r): node(r)}} for r in ROLES},
            }
        }
        p = self.tmp / "inventory.yml"
        p.write_text(yaml.safe_dump(inv))
        return p

    def env(self) -> dict[str, str]:
        home = self.tmp / "ansible-home"
        home.mkdir(exist_ok=True)
        return {
            **os.environ,
            "ANSIBLE_CONFIG": str(Path(__file__).resolve().parent.parent / "ansible/ansible.cfg"),
            "ANSIBLE_HOME": str(home),
            "ANSIBLE_LOCAL_TEMP": str(home / "tmp"),
            "ANSIBLE_ASYNC_DIR": str(self.tmp / "async"),
            "ANSIBLE_HOST_KEY_CHECKING": "False",
            # one SSH connection per node for a playbook's tasks (and the next playbook's
            # within a minute), as Ansible's own default; down() kills what holds it open
            "ANSIBLE_SSH_ARGS": "-o ControlMaster=auto -o ControlPersist=60s "
            "-o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR",
            "ANSIBLE_SSH_CONTROL_PATH_DIR": str(home / "cp"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_FORCE_COLOR": "0",
        }

    # ------------------------------------------------------------------ down

    def down(self) -> list[str]:
        """Remove everything; return what could not be removed."""
        problems = []
        for p in self.sshd.values():
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        # processes the agents started and left (e.g. a failed run): only those in our netns
        for role in ROLES:
            ns = self.ns(role)
            if Path(f"/run/netns/{ns}").exists():
                pids = sh(["ip", "netns", "pids", ns], check=False).stdout.split()
                for pid in pids:
                    try:
                        os.kill(int(pid), 9)
                    except (ProcessLookupError, ValueError):
                        pass
                sh(["ip", "netns", "del", ns], check=False)
                if Path(f"/run/netns/{ns}").exists():
                    problems.append(f"netns {ns} still exists")
        for role in ROLES:
            sh(["ip", "link", "del", f"tbm{self.tag}{role[0]}"], check=False)
        sh(["ip", "link", "del", self.bridge], check=False)
        if sh(["ip", "link", "show", self.bridge], check=False).returncode == 0:
            problems.append(f"bridge {self.bridge} still exists")
        return problems
