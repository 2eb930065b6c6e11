#!/usr/bin/env bash
# The Python client (clients/python): its generated part, keyvault_api, is what the
# pinned openapi-python-client (scripts/api-check-requirements.txt) makes from
# docs/openapi.yaml; its hand-written part, keyvault_client, rides on it.
#
#   scripts/python-client.sh generate            writes clients/python/keyvault_api anew
#   scripts/python-client.sh check               fails, with a diff, if the committed
#                                                keyvault_api is not what generate makes
#   scripts/python-client.sh test KEYVAULTD      installs the client into .build-venv
#                                                and runs its tests against that binary
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv="$root/.build-venv"
client="$root/clients/python"
config="$client/openapi-python-client.yaml"
spec="$root/docs/openapi.yaml"
package=keyvault_api

[ -x "$venv/bin/openapi-python-client" ] || { echo "python-client: $venv has no openapi-python-client; run scripts/install-deps.sh" >&2; exit 2; }

# The pinned generator reads OpenAPI 3.1 only; docs/openapi.yaml is 3.2 for one thing,
# the event stream's `itemSchema`. Its 3.1 rendition, written to $1: the same document
# with each `itemSchema` replaced by 3.1's `schema: {type: string}` (the stream as text,
# which keyvault_client's event iterator reads).
spec_for_generator() {
    "$venv/bin/python" - "$spec" "$1" <<'PY'
import sys, yaml
spec = yaml.safe_load(open(sys.argv[1]))
assert spec["openapi"].startswith("3.2."), "docs/openapi.yaml is expected to be OpenAPI 3.2"
spec["openapi"] = "3.1.1"
def walk(node):
    if isinstance(node, dict):
        if "itemSchema" in node:
            del node["itemSchema"]
            node.setdefault("schema", {"type": "string"})
        for value in node.values(): walk(value)
    elif isinstance(node, list):
        for value in node: walk(value)
walk(spec)
yaml.safe_dump(spec, open(sys.argv[2], "w"), sort_keys=False, allow_unicode=True)
PY
}

# Generates into a fresh folder and prints the path of the package made there.
generate_into() {
    local out="$1/project"
    # Called in $(…), where set -e does not hold: each step's failure is returned by hand.
    spec_for_generator "$1/openapi-3.1.yaml" || return 1
    # The post hooks (ruff) are found on PATH: the venv's, pinned. The generator orders
    # some imports by a set's order, so its hash seed is fixed (and ruff sorts them).
    PATH="$venv/bin:$PATH" PYTHONHASHSEED=0 "$venv/bin/openapi-python-client" generate \
        --path "$1/openapi-3.1.yaml" --config "$config" --output-path "$out" --meta none >&2 || return 1
    [ -d "$out" ] || return 1
    rm -rf "$out/.ruff_cache"
    echo "$out"
}

case "${1:-}" in
generate)
    tmp=$(mktemp -d /tmp/kv-pyclient-XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
    made=$(generate_into "$tmp") || { echo "python-client: generating from docs/openapi.yaml failed; nothing was replaced" >&2; exit 1; }
    rm -rf "${client:?}/$package"
    cp -R "$made" "$client/$package"
    echo "python-client: wrote $client/$package from docs/openapi.yaml"
    ;;
check)
    tmp=$(mktemp -d /tmp/kv-pyclient-XXXXXX)
    trap 'rm -rf "$tmp"' EXIT
    made=$(generate_into "$tmp") || { echo "python-client: generating from docs/openapi.yaml failed" >&2; exit 1; }
    if ! diff -ru --exclude=__pycache__ "$client/$package" "$made"; then
        echo "python-client: clients/python/$package is not what openapi-python-client makes from docs/openapi.yaml; run scripts/python-client.sh generate" >&2
        exit 1
    fi
    echo "python-client: clients/python/$package matches docs/openapi.yaml"
    ;;
test)
    binary=${2:?usage: scripts/python-client.sh test KEYVAULTD_BINARY}
    [ -x "$binary" ] || { echo "python-client: $binary is not an executable" >&2; exit 2; }
    # Installed editable, so the tests run the code as it is in the tree.
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$client"
    cd "$client"
    KEYVAULTD=$(realpath "$binary") "$venv/bin/python" -m pytest -q -p no:cacheprovider tests
    ;;
*)
    echo "usage: scripts/python-client.sh generate | check | test KEYVAULTD_BINARY" >&2
    exit 2
    ;;
esac
