#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian 12 machine: the omniORB
# interop peers and the CORBA services' IDL from Debian, a C++ compiler
# for the peers, omniORBpy for the examples' Python peers, JacORB (a Java
# JDK and Maven from Debian, JacORB's jars from Maven Central), and the
# nightly toolchain + cargo-fuzz for the fuzz replay. Idempotent; needs
# root (or sudo) for apt-get.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

pkgs=(omniorb omniidl libomniorb4-dev omniorb-idl omniorb-nameserver g++ pkg-config python3 python3-venv
  openjdk-17-jdk-headless maven)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# omniORBpy (omniORB's Python mapping, and omniidl's Python back end) for
# examples/python: Debian 12 does not package it; PyPI's jeteve-omniorb
# wheel (omniORB 4.3.3 built for CPython 3.11 on manylinux, its libraries
# bundled) has both. It goes into a virtual environment because Debian's
# Python refuses pip installs into the system; examples/tests/examples.rs
# looks for it at the same place (PEREGRINE_OMNIORBPY_VENV overrides).
omniorbpy_venv="${PEREGRINE_OMNIORBPY_VENV:-$HOME/.cache/peregrine/omniorbpy-venv}"
if ! "$omniorbpy_venv/bin/python" -c "import omniORB, omniidl_be.python" 2>/dev/null; then
  echo "installing omniORBpy into $omniorbpy_venv"
  python3 -m venv "$omniorbpy_venv"
  "$omniorbpy_venv/bin/pip" install -q "jeteve-omniorb==4.3.3.post7"
fi

# JacORB 3.9 for the Java interop peer (tests/interop/tests/jacorb.rs):
# the jars tests/interop/java/pom.xml lists, with their dependencies,
# copied into one directory the tests put on the class path
# (PEREGRINE_JACORB_LIB overrides). About 7 MB; the first copy takes
# some 30 s (Maven fetches its dependency plugin too), later runs
# nothing. The .complete marker holds the pom's checksum and is written
# last, so an interrupted copy or a changed pom is redone.
jacorb_pom="$(dirname "$0")/../tests/interop/java/pom.xml"
jacorb_lib="${PEREGRINE_JACORB_LIB:-$HOME/.cache/peregrine/jacorb-3.9/lib}"
jacorb_sum="$(sha256sum "$jacorb_pom" | cut -d' ' -f1)"
if [ "$(cat "$jacorb_lib/.complete" 2>/dev/null)" != "$jacorb_sum" ]; then
  if command -v mvn >/dev/null && command -v javac >/dev/null; then
    echo "installing JacORB into $jacorb_lib"
    rm -rf "$jacorb_lib"
    mkdir -p "$jacorb_lib"
    mvn -q -B -Dstyle.color=never -f "$jacorb_pom" \
      dependency:copy-dependencies -DoutputDirectory="$jacorb_lib"
    echo "$jacorb_sum" > "$jacorb_lib/.complete"
  else
    echo "JacORB interop peer skipped: needs javac (JDK 17) and mvn; the JacORB tests will say they did not run"
  fi
fi

# The OMG's IDL for the CORBA module and its companions (CORBA, IOP, GIOP,
# IIOP, Messaging, PortableServer, PortableInterceptor, DynamicAny,
# CosNaming, CosNotification, security, RT CORBA...), as JacORB 3.9
# publishes it on Maven Central beside its IDL compiler (the
# `resources` zip of org.jacorb:jacorb-idl-compiler, about 110 KB).
# crates/idl-rust/tests/omg_corpus.rs checks every file with the front
# end and the Rust generator (PEREGRINE_OMG_IDL overrides the directory).
omg_idl="${PEREGRINE_OMG_IDL:-$HOME/.cache/peregrine/jacorb-3.9/omg-idl}"
omg_idl_artifact="org.jacorb:jacorb-idl-compiler:3.9:zip:resources"
if [ "$(cat "$omg_idl/.complete" 2>/dev/null)" != "$omg_idl_artifact" ]; then
  if command -v mvn >/dev/null; then
    echo "installing the OMG IDL corpus into $omg_idl"
    rm -rf "$omg_idl" "$omg_idl.zip.d"
    mvn -q -B -Dstyle.color=never dependency:copy \
      -Dartifact="$omg_idl_artifact" -DoutputDirectory="$omg_idl.zip.d"
    mkdir -p "$omg_idl"
    # The zip holds one directory, jacorb-idl-compiler-3.9/: its files go
    # straight into $omg_idl.
    python3 - "$omg_idl.zip.d/jacorb-idl-compiler-3.9-resources.zip" "$omg_idl" <<'EOF'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        name = info.filename.split("/", 1)[-1]
        if info.is_dir() or not name or "/" in name or name.startswith("."):
            continue
        with open(os.path.join(sys.argv[2], name), "wb") as out:
            out.write(z.read(info))
EOF
    rm -rf "$omg_idl.zip.d"
    echo "$omg_idl_artifact" > "$omg_idl/.complete"
  else
    echo "OMG IDL corpus skipped: needs mvn; crates/idl-rust/tests/omg_corpus.rs will fail unless PEREGRINE_NO_OMG_IDL=1"
  fi
fi

if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust with rustup first" >&2
  exit 1
fi
if [ "${PEREGRINE_NO_FUZZ:-0}" != 1 ]; then
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
fi
