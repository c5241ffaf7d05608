"""Packs bazel-bin/python/package/zionsim into a wheel that pip installs offline.

Usage: make_wheel.py PACKAGE_DIR OUT.whl VERSION_H
       make_wheel.py --name VERSION_H   (the wheel's tagged file name)

The wheel is tagged for the interpreter that runs this script (Debian's
/usr/bin/python3, the one the extension is built against): cpXY-cpXY-PLATFORM.
pip wants that tag in the file's name, which a Bazel output cannot carry, so
OUT keeps a fixed name and scripts/install_python.sh renames a copy
(wheel_name() below says what to) before pip installs it. Deterministic: fixed
timestamps and order, so the same inputs give the same bytes.
"""

import base64
import hashlib
import os
import re
import sys
import sysconfig
import zipfile

VERSION_RE = re.compile(r'kVersion = "([0-9.]+)"')


def tag():
    major, minor = sys.version_info[:2]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"cp{major}{minor}-cp{major}{minor}-{platform}"


def wheel_name(version):
    return f"zionsim-{version}-{tag()}.whl"


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main(package_dir, out, version):
    files = []
    root = os.path.join(package_dir, "zionsim")
    for name in sorted(os.listdir(root)):
        with open(os.path.join(root, name), "rb") as f:
            files.append((f"zionsim/{name}", f.read()))
    info = f"zionsim-{version}.dist-info"
    metadata = (f"Metadata-Version: 2.1\nName: zionsim\nVersion: {version}\n"
                "Summary: ZionEX cluster simulator: what-if runs as pandas DataFrames\n"
                "Requires-Python: >=3.9\nRequires-Dist: pandas\n").encode()
    wheel = f"Wheel-Version: 1.0\nGenerator: zionsim make_wheel.py\nRoot-Is-Purelib: false\nTag: {tag()}\n".encode()
    files += [(f"{info}/METADATA", metadata), (f"{info}/WHEEL", wheel)]
    record = "\n".join([record_line(n, d) for n, d in files] + [f"{info}/RECORD,,"]) + "\n"
    files.append((f"{info}/RECORD", record.encode()))
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            z.writestr(entry, data, zipfile.ZIP_DEFLATED)


def version(version_h):
    """The version tools/version.h gives the binary (kVersion)."""
    with open(version_h, encoding="utf-8") as f:
        found = VERSION_RE.search(f.read())
    if not found:
        sys.exit(f"make_wheel.py: no kVersion in {version_h}")
    return found.group(1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--name":
        print(wheel_name(version(sys.argv[2])))
    elif len(sys.argv) == 4:
        main(sys.argv[1], sys.argv[2], version(sys.argv[3]))
    else:
        sys.exit("usage: make_wheel.py PACKAGE_DIR OUT.whl VERSION_H | make_wheel.py --name VERSION_H")
