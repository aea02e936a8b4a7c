"""Container hosts as SSH targets for ``make verify``: a fleet the checks own, reached the way a user's is.

``Fleet(engine, directory)`` makes a key pair for the run (ssh-keygen), an ``ssh_config`` and a
``known_hosts`` the run owns. ``add(host, name, ...)`` turns a started container host (testinfra, docker
backend) into a target: new host keys made in the container (no two targets share one), the login user
``zrops`` with the run's public key, the verify account's scoped sudo rules (the page's install snippet) unless
``sudo=False``, and the host key written to
known_hosts from the container itself, out of band, so ssh checks it (``StrictHostKeyChecking yes``; nothing
here turns host key checking off). The containers keep ``--network none``: ssh reaches each one through
``ProxyCommand <engine> exec -i %h /usr/sbin/sshd -i``, a real sshd speaking the SSH protocol on the
pipe. ``inventory(groups)`` writes an Ansible YAML inventory of the targets (plus any extra entries, such as
a name no container has or a wrong key, for the bad-input checks).

Which services a target runs is the caller's: checks/hosts/apache.py's token site (a good target) or its
key-in-a-file site (the misconfigured one).
"""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from checks.hosts.engine import SNIPPETS_IN_CONTAINER
from checks.hosts.util import ok

LOGIN = "zrops"


@dataclass
class Fleet:
    engine_cli: str
    directory: Path
    login: str = LOGIN  # root where sudo cannot work (the s390x host: qemu-user does not honour setuid)
    hosts: dict[str, dict] = field(default_factory=dict)  # inventory name -> host variables

    def __post_init__(self):
        self.directory.mkdir(parents=True, exist_ok=True)
        self.key = self.directory / "id_ed25519"
        if not self.key.exists():
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "zrunbook-verify",
                            "-f", str(self.key)], check=True)
        self.known_hosts = self.directory / "known_hosts"
        self.known_hosts.touch()
        self.ssh_config = self.directory / "ssh_config"
        self.ssh_config.write_text(
            "# The verify checks' targets: containers without a network, reached through the engine.\n"
            "Host zr-*\n"
            f"  ProxyCommand {self.engine_cli} exec -i %h /usr/sbin/sshd -i\n"
            f"  UserKnownHostsFile {self.known_hosts}\n"
            "  StrictHostKeyChecking yes\n"
            "  IdentitiesOnly yes\n"
            "  ControlMaster auto\n"
            f"  ControlPath {self.directory}/cm-%C\n"
            "  ControlPersist 60\n"
            "  LogLevel ERROR\n", encoding="utf-8")

    def add(self, host, name: str, *, sudo: bool = True, services: tuple[str, ...] = ("www-data",), **hostvars) -> str:
        """Make the container behind testinfra ``host`` an SSH target listed as ``name``; returns the name. With
        ``sudo`` the login user gets the verify account (snippets/verify/install-verify-account.sh for the
        ``services`` users), else no sudo rule at all."""
        pub = Path(f"{self.key}.pub").read_text(encoding="utf-8").strip()
        user = self.login
        home = "/root" if user == "root" else f"/home/{user}"
        # the verify account's page step: the checks root's copies, the login user's sudo rules scoped to them
        account = (f"bash {SNIPPETS_IN_CONTAINER}/verify/install-verify-account.sh {user} "
                   f"{' '.join(services)} >/dev/null; ") if sudo else ""
        ok(host, "set -e; rm -f /etc/ssh/ssh_host_*; ssh-keygen -A >/dev/null; mkdir -p /run/sshd; "
                 "grep -q \"$(hostname)\" /etc/hosts || echo \"127.0.1.1 $(hostname)\" >> /etc/hosts; "
                 f"id {user} >/dev/null 2>&1 || useradd -m -s /bin/bash {user}; "
                 f"install -d -m 700 -o {user} -g {user} {home}/.ssh; "
                 f"echo {shlex.quote(pub)} > {home}/.ssh/authorized_keys; "
                 f"chown {user}: {home}/.ssh/authorized_keys; {account}")
        key = host.check_output("cat /etc/ssh/ssh_host_ed25519_key.pub").split()[:2]
        with self.known_hosts.open("a", encoding="utf-8") as fh:
            fh.write(f"{host.zr_container} {' '.join(key)}\n")
        self.hosts[name] = {"ansible_host": host.zr_container, **hostvars}
        return name

    def add_entry(self, name: str, **hostvars) -> str:
        """An inventory entry with no target set up here (a container that does not exist, a wrong key)."""
        self.hosts[name] = dict(hostvars)
        return name

    def inventory(self, groups: dict[str, list[str]], path: Path | None = None) -> Path:
        """An Ansible YAML inventory: the targets in these groups, the run's key, user and ssh_config."""
        import yaml  # ansible-core's own dependency (PyYAML)

        common = {"ansible_user": self.login, "ansible_ssh_private_key_file": str(self.key),
                  "ansible_ssh_common_args": f"-F {self.ssh_config}"}
        data = {"all": {"vars": common, "children": {
            group: {"hosts": {n: self.hosts[n] for n in names}} for group, names in groups.items()}}}
        path = path or self.directory / "inventory.yml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path

    def close_connections(self) -> None:
        """End the ssh master connections (ControlPersist) so that no sshd of the run is left on a target."""
        for hostvars in self.hosts.values():
            if "ansible_host" in hostvars:
                subprocess.run(["ssh", "-F", str(self.ssh_config), "-l", self.login, "-O", "exit",
                                hostvars["ansible_host"]], capture_output=True, check=False)
