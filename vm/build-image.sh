#!/bin/bash
# Build the priolab VM image from Debian's packages only: a bookworm minbase debootstrap, the
# packages of packages.txt installed in a chroot (no service started), the guest boot hook, and
# then an ext4 image made with `mkfs.ext4 -d` (no loop mount). Output, in OUT_DIR:
#   rootfs.img (raw ext4), vmlinuz, initrd.img, recipe.sha256 (written last: marks a complete build)
# Usage: build-image.sh OUT_DIR RECIPE_HASH [MIRROR]
set -euo pipefail
out=$1
recipe_hash=$2
mirror=${3:-http://deb.debian.org/debian}
here=$(cd "$(dirname "$0")" && pwd)
suite=bookworm

work=$(mktemp -d "${out%/}.build.XXXXXX")
root=$work/root
mounted=()
cleanup() {
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT

t0=$(date +%s)
debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -30 "$work/debootstrap.log" >&2
	exit 1
}
echo "build-image: debootstrap done in $(($(date +%s) - t0)) s"

# No service may start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod 755 "$root/usr/sbin/policy-rc.d"
for m in proc sys dev dev/pts; do
	mount --bind "/$m" "$root/$m"
	mounted+=("$root/$m")
done

pkgs=$(grep -v '^\s*#' "$here/packages.txt" | grep -v '^\s*$' | tr '\n' ' ')
# shellcheck disable=SC2086
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	apt-get install -y --no-install-recommends $pkgs >"$work/apt.log" 2>&1 || {
	tail -30 "$work/apt.log" >&2
	exit 1
}
chroot "$root" apt-get clean
echo "build-image: packages installed at $(($(date +%s) - t0)) s"

for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}"; done
mounted=()
rm -f "$root/usr/sbin/policy-rc.d"

# The guest side: one oneshot unit that mounts the shares, runs the job and powers off.
install -m 755 "$here/guest/priolab-job" "$root/usr/local/sbin/priolab-job"
install -m 644 "$here/guest/priolab-job.service" "$root/etc/systemd/system/priolab-job.service"
ln -sf /etc/systemd/system/priolab-job.service "$root/etc/systemd/system/multi-user.target.wants/priolab-job.service"
# Quiet, fast boot: no getty, no timers; the job is the only thing the VM does.
for u in getty@tty1.service serial-getty@ttyS0.service apt-daily.timer apt-daily-upgrade.timer \
	e2scrub_all.timer fstrim.timer man-db.timer systemd-timesyncd.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
# ssh comes up only when a job starts it (the Ansible tests); its host keys are made now.
ln -sf /dev/null "$root/etc/systemd/system/ssh.service"
echo priolab-vm >"$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 priolab-vm\n' >"$root/etc/hosts"
echo '/dev/vda / ext4 rw,relatime 0 1' >"$root/etc/fstab"
passwd -R "$root" -d root >/dev/null

cp -L "$root/vmlinuz" "$work/vmlinuz"
cp -L "$root/initrd.img" "$work/initrd.img"
size_mb=$(($(du -sm "$root" | cut -f1) + 768))
mkfs.ext4 -q -F -L priolab-vm -d "$root" "$work/rootfs.img" "${size_mb}M"
mkdir -p "$out"
mv "$work/rootfs.img" "$work/vmlinuz" "$work/initrd.img" "$out/"
dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Package} ${Version}\n' >"$out/packages.lock"
echo "$recipe_hash" >"$out/recipe.sha256"
echo "build-image: $out ready in $(($(date +%s) - t0)) s (${size_mb} MB image)"
