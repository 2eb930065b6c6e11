#!/usr/bin/env bash
# `make release`: keyvaultd, keyvault and keyvault-relay built for release with the
# Swift runtime linked in (no toolchain needed where they run), stripped, in one
# archive with the systemd units, the default policy, man pages (ArgumentParser's
# manual tool) and shell completions; and the archive's checksum beside it.
#
# What the binaries still load from the system: libc, the C++ runtime and libgcc_s (the
# linked-in Swift runtime's), zlib (swift-nio-extras' compression links it),
# libsodium, OpenSSL and SQLite (Debian: libstdc++6, zlib1g, libsodium23, libssl3,
# libsqlite3-0), listed in the archive's README. The client's documents go in share/doc.
# Output: .build/release-archive/keyvaultd-VERSION-linux-ARCH.tar.gz and .sha256.
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/KeyVaultIDs/KeyVaultVersion.swift)
name="keyvaultd-$version-linux-$(uname -m)"
out="$PWD/.build/release-archive"
stage="$out/$name"
products=(keyvaultd keyvault keyvault-relay)

# `--bin-path`: where the executables are built. `--build-only`: build them (and the example
# sync engine, which the suites run beside them and which is not shipped), and stop there:
# `make test` runs its suites against these, then this script finds them built.
case "${1:-}" in
    --bin-path) swift build -c release --static-swift-stdlib --show-bin-path; exit 0 ;;
    --build-only) build_only=1 ;;
    "") build_only= ;;
    *) echo "usage: $0 [--build-only | --bin-path]" >&2; exit 64 ;;
esac
for product in "${products[@]}" ${build_only:+example-sync-engine}; do
    swift build -c release --static-swift-stdlib --product "$product"
done
[ -z "$build_only" ] || exit 0
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)

rm -rf "$stage" && mkdir -p "$stage"/{bin,lib/systemd/system,etc/keyvaultd/policy,share/man/man1,share/doc/keyvaultd}
mkdir -p "$stage"/share/{bash-completion/completions,zsh/site-functions,fish/vendor_completions.d}
for product in "${products[@]}"; do
    install -m 0755 "$bin/$product" "$stage/bin/$product"
    strip --strip-all "$stage/bin/$product"
    # The point of the release: nothing from the toolchain's folder.
    if ldd "$stage/bin/$product" | grep -E 'libswift|libFoundation|libdispatch|libBlocksRuntime|/opt/swift' >&2; then
        echo "release: $product still loads the Swift runtime from the toolchain" >&2
        exit 1
    fi
    # And nothing the README's apt-get line (and the archive's) does not name.
    unexpected=$(ldd "$stage/bin/$product" | awk '{print $1}' \
        | grep -vE '^(linux-vdso\.so|/lib.*/ld-linux|ld-linux)|^lib(c|m|dl|pthread|rt|util|stdc\+\+|gcc_s|z|sodium|ssl|crypto|sqlite3)\.so' || true)
    [ -z "$unexpected" ] || { echo "release: $product loads $unexpected, which the install notes do not name" >&2; exit 1; }
    "$stage/bin/$product" --generate-completion-script bash > "$stage/share/bash-completion/completions/$product"
    "$stage/bin/$product" --generate-completion-script zsh > "$stage/share/zsh/site-functions/_$product"
    "$stage/bin/$product" --generate-completion-script fish > "$stage/share/fish/vendor_completions.d/$product.fish"
done

# Man pages from the commands' own help, by the tool behind ArgumentParser's GenerateManual
# plugin (the plugin itself would first rebuild every product in debug): it runs each
# released executable with --experimental-dump-help.
swift build -c release --static-swift-stdlib --product generate-manual
for product in "${products[@]}"; do
    "$bin/generate-manual" "$stage/bin/$product" --section 1 --date 2026-01-01 --authors "the keyvaultd developers" \
        --output-directory "$stage/share/man/man1" > /dev/null
    [ -s "$stage/share/man/man1/$product.1" ] || { echo "release: no man page was made for $product" >&2; exit 1; }
done

install -m 0644 dist/*.service "$stage/lib/systemd/system/"
install -m 0644 policy/default.toml "$stage/etc/keyvaultd/policy/default.toml"
install -m 0644 LICENSE "$stage/LICENSE"
# What an app's developer and a relay's operator read: shipped, so the README points at files, not at a site.
docs=(docs/API.md docs/CLIENT.md docs/openapi.yaml docs/RELAY.md)
install -m 0644 "${docs[@]}" "$stage/share/doc/keyvaultd/"
# And how to use it: the project's README, whose quick start is what a new user follows first.
install -m 0644 README.md "$stage/share/doc/keyvaultd/README.md"
# The Python client (clients/python) as a wheel, built by the pinned tools of .build-venv
# (scripts/install-deps.sh) with its files' times fixed.
mkdir -p "$stage/share/keyvaultd/python"
SOURCE_DATE_EPOCH=1767225600 .build-venv/bin/python -m pip wheel --quiet --no-deps --no-build-isolation \
    -w "$stage/share/keyvaultd/python" clients/python
ls "$stage"/share/keyvaultd/python/keyvault_client-*.whl > /dev/null
cat > "$stage/README" <<TEXT
keyvaultd $version for Linux ($(uname -m))

bin/                 keyvaultd (the daemon), keyvault (its CLI), keyvault-relay (the relay service)
lib/systemd/system/  the units; etc/keyvaultd/policy/ the default policy
share/man/           man pages; share/{bash-completion,zsh,fish}/ completions
share/doc/keyvaultd/ README.md (using it: one device, a second, the relay service; start here),
                     API.md (the daemon's socket API), openapi.yaml (the same, as OpenAPI 3.2),
                     CLIENT.md (the KeyVaultClient library), RELAY.md (running keyvault-relay)
share/keyvaultd/python/ the Python client, a wheel: pip install share/keyvaultd/python/*.whl

The Swift runtime is linked in. The system provides libc and, on Debian or Ubuntu:
  apt-get install libstdc++6 zlib1g libsodium23 libssl3 libsqlite3-0
Install (as root):
  tar -xzf $name.tar.gz && cd $name
  install -m 0755 bin/* /usr/local/bin/
  install -d -m 0755 /etc/keyvaultd/policy && install -m 0644 etc/keyvaultd/policy/default.toml /etc/keyvaultd/policy/
  install -m 0644 lib/systemd/system/*.service /etc/systemd/system/
  cp -r share/man share/doc /usr/local/share/
TEXT
(cd "$stage" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum > SHA256SUMS)

# Reproducible enough to compare: fixed owners and order, no timestamps from the build machine.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-01-01 00:00:00Z' -C "$out" -czf "$out/$name.tar.gz" "$name"
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "release: $out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)); bin/: $(du -ch "$stage"/bin/* | tail -n 1 | cut -f1)"
# Each stripped executable's size, in bytes and MiB (issue 35 tracks them against their goal, 25 MiB each).
# The same in $out/sizes.tsv, which `make bench` puts in docs/BENCHMARKS.md.
: > "$out/sizes.tsv"
for product in "$stage"/bin/*; do
    bytes=$(stat -c %s "$product")
    echo "release: $(basename "$product") stripped: $bytes bytes ($(awk "BEGIN { printf \"%.1f\", $bytes / 1048576 }") MiB)"
    printf '%s\t%s\n' "$(basename "$product")" "$bytes" >> "$out/sizes.tsv"
done
echo "release: archive: $(stat -c %s "$out/$name.tar.gz") bytes"
printf 'archive\t%s\n' "$(stat -c %s "$out/$name.tar.gz")" >> "$out/sizes.tsv"
