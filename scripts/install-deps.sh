#!/usr/bin/env bash
# Installs what the tests need on a fresh Debian 12 machine: the omniORB
# interop peers and the CORBA services' IDL from Debian, a C++ compiler
# for the peers, and the nightly toolchain + cargo-fuzz for the fuzz
# replay. Idempotent; needs root (or sudo) for apt-get.
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

pkgs=(omniorb omniidl libomniorb4-dev omniorb-idl omniorb-nameserver g++ pkg-config python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust with rustup first" >&2
  exit 1
fi
if [ "${PEREGRINE_NO_FUZZ:-0}" != 1 ]; then
  rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
  command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
fi
