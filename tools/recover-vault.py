#!/usr/bin/env python3
"""Recover an account's keys from a keyvaultd data directory without keyvaultd.

An independent implementation of docs/FORMAT.md: Python 3's standard library
plus the system libsodium through ctypes. It only reads the vault.

    recover-vault.py DATA_DIR ACCOUNT                      passphrase on stdin (one line)
    recover-vault.py DATA_DIR ACCOUNT --passphrase-file F  passphrase in F (first line)
    recover-vault.py --example                             the FORMAT.md worked example
    recover-vault.py --kit FILE                            open a recovery kit (FORMAT.md "Recovery kit",
                                                           versions 1 and 2); kit passphrase on stdin

Prints JSON: {"account", "generations": [{"generation", "keyId", "key"}],
"deviceSigningSeed", "deviceBoxSecret"} with the secrets in base64. Exits 1
on a wrong passphrase, a key ID or public-key mismatch, or a malformed vault.
"""

import argparse
import base64
import json
import os
import sqlite3
import sys
import urllib.parse

import sodium_ctypes
from sodium_ctypes import (SodiumError, blake2b, ed25519_keypair, labeled, u64be, x25519_public_key,
                          xchacha_open, xchacha_seal)

# docs/FORMAT.md, "Conventions": the labels.
LABEL_WRAP = "keyvault/v1/wrap"
LABEL_KEY_ID = "keyvault/v1/key-id"
LABEL_DEVICE_ID = "keyvault/v1/device-id"

WRAP_VERSION = 0x01
NONCE_BYTES = 24
TAG_BYTES = 16
KEY_BYTES = 32
SALT_BYTES = 16

KIND_GENERATION = "generation-key"
KIND_SIGNING = "device-signing-key"
KIND_BOX = "device-box-key"


class RecoveryError(SodiumError):
    pass


# --- libsodium (tools/sodium_ctypes.py) ------------------------------------

def argon2id(passphrase: bytes, salt: bytes, ops: int, mem: int) -> bytes:
    """FORMAT.md "Key derivation": Argon2id v1.3, parallelism 1, 32 bytes."""
    if len(salt) != SALT_BYTES:
        raise RecoveryError(f"the KDF salt is {len(salt)} bytes; it MUST be {SALT_BYTES}")
    return sodium_ctypes.argon2id(passphrase, salt, ops, mem, KEY_BYTES)


def ed25519_public_key(seed: bytes) -> bytes:
    return ed25519_keypair(seed)[0]


# --- the format -------------------------------------------------------------

def wrap_aad(account: str, kind: str, generation: int) -> bytes:
    """FORMAT.md "Wrapping": label || 0x00 || len32 account || account || len32 kind || kind || u64be generation."""
    return labeled(LABEL_WRAP, [account.encode("utf-8"), kind.encode("utf-8")]) + u64be(generation)


def key_id(key: bytes) -> str:
    return blake2b(labeled(LABEL_KEY_ID, [key]), 16).hex()


def device_id(signing_public: bytes, box_public: bytes) -> str:
    return blake2b(labeled(LABEL_DEVICE_ID, [signing_public, box_public]), 16).hex()


def wrap(secret: bytes, kek: bytes, account: str, kind: str, generation: int, nonce: bytes) -> bytes:
    return bytes([WRAP_VERSION]) + nonce + xchacha_seal(kek, nonce, secret, wrap_aad(account, kind, generation))


def unwrap(blob: bytes, kek: bytes, account: str, kind: str, generation: int) -> bytes:
    where = f"item {kind}/{generation}"
    if len(blob) < 1 + NONCE_BYTES + TAG_BYTES:
        raise RecoveryError(f"{where}: the wrapped blob is {len(blob)} bytes, shorter than {1 + NONCE_BYTES + TAG_BYTES}")
    if blob[0] != WRAP_VERSION:
        raise RecoveryError(f"{where}: unsupported wrap version 0x{blob[0]:02x} (expected 0x01)")
    nonce, sealed = blob[1:1 + NONCE_BYTES], blob[1 + NONCE_BYTES:]
    plain = xchacha_open(kek, nonce, sealed, wrap_aad(account, kind, generation))
    if plain is None:
        return None
    if len(plain) != KEY_BYTES:
        raise RecoveryError(f"{where}: the secret is {len(plain)} bytes; it MUST be {KEY_BYTES}")
    return plain


# --- recovery ---------------------------------------------------------------

def open_vault(data_dir: str) -> sqlite3.Connection:
    path = os.path.join(data_dir, "vault.sqlite")
    if not os.path.isfile(path):
        raise RecoveryError(f"no vault at {path}")
    base = "file:" + urllib.parse.quote(os.path.abspath(path))
    # mode=ro reads a WAL database, live or not, when the -shm file can be
    # opened or created. On read-only media with no -wal file left, the
    # database is complete on its own and immutable=1 reads it without -shm.
    attempts = [base + "?mode=ro"]
    if not os.path.exists(path + "-wal"):
        attempts.append(base + "?mode=ro&immutable=1")
    for index, uri in enumerate(attempts):
        try:
            db = sqlite3.connect(uri, uri=True)
            db.row_factory = sqlite3.Row
            db.execute("SELECT 1 FROM accounts LIMIT 1")
            return db
        except sqlite3.Error as error:
            if index == len(attempts) - 1:
                raise RecoveryError(f"cannot read {path}: {error}") from error


def recover(data_dir: str, account: str, passphrase: str) -> dict:
    db = open_vault(data_dir)
    try:
        # One read transaction: a consistent snapshot even while keyvaultd writes.
        db.execute("BEGIN")
        row = db.execute("SELECT * FROM accounts WHERE id = ?", (account,)).fetchone()
        if row is None:
            raise RecoveryError(f"no account {account!r} in {data_dir}")
        if row["kdf_algorithm"] != "argon2id13":
            raise RecoveryError(f"unsupported KDF {row['kdf_algorithm']!r}")
        # Since schema v4 a key is known by its key ID (two keys may share a
        # generation number after concurrent rotations); before, by its number.
        has_key_id = "key_id" in {column[1] for column in db.execute("PRAGMA table_info(items)")}
        generations = db.execute(
            "SELECT generation, key_id, state FROM generations WHERE account = ? ORDER BY generation, key_id", (account,)).fetchall()
        items = db.execute(
            "SELECT kind, generation, " + ("key_id" if has_key_id else "'' AS key_id") + ", wrapped FROM items "
            "WHERE account = ? ORDER BY kind, generation" + (", key_id" if has_key_id else ""), (account,)).fetchall()
        db.execute("COMMIT")
    finally:
        db.close()

    kek = argon2id(passphrase.encode("utf-8"), bytes(row["kdf_salt"]), int(row["kdf_ops"]), int(row["kdf_mem"]))

    by_key_id = {g["key_id"]: g for g in generations}
    keys, seed, box = {}, None, None
    for item in items:
        kind, number = item["kind"], item["generation"]
        plain = unwrap(bytes(item["wrapped"]), kek, account, kind, number)
        if plain is None:
            raise RecoveryError(f"wrong passphrase for {account}: item {kind}/{number} failed authentication")
        if kind == KIND_GENERATION:
            expected = item["key_id"] or next((g["key_id"] for g in generations if g["generation"] == number), None)
            g = by_key_id.get(expected)
            if g is None or g["generation"] != number:
                raise RecoveryError(f"generation {number} has a wrapped key but no row in generations")
            # Two keys of one number share an AAD: the key ID tells a blob swapped between them.
            computed = key_id(plain)
            if computed != expected:
                raise RecoveryError(f"key ID mismatch for generation {number}: "
                                    f"the table says {expected}, the key hashes to {computed}")
            keys[expected] = (number, plain)
        elif kind == KIND_SIGNING and number == 0:
            seed = plain
        elif kind == KIND_BOX and number == 0:
            box = plain
        else:
            raise RecoveryError(f"unknown item {kind}/{number}")

    for g in generations:
        if g["key_id"] not in keys and g["state"] != "destroyed":
            raise RecoveryError(f"generation {g['generation']} ({g['key_id']}) is {g['state']} but has no wrapped key")

    if seed is None or box is None:
        raise RecoveryError(f"account {account} lacks its device signing or box key")
    signing_public, box_public = ed25519_public_key(seed), x25519_public_key(box)
    if signing_public != bytes(row["signing_public_key"]) or box_public != bytes(row["box_public_key"]):
        raise RecoveryError("the device keys do not match the account's public keys")
    if device_id(signing_public, box_public) != row["device_id"]:
        raise RecoveryError("the device ID does not match the device's public keys")

    b64 = lambda b: base64.b64encode(b).decode("ascii")
    # FORMAT.md: the current key is `current_key_id` (schema v5); in older vaults,
    # generation `current_generation` (one key per number before v4's concurrent rotations).
    current = int(row["current_generation"])
    named = row["current_key_id"] if "current_key_id" in row.keys() else ""
    current_id = named if named in keys else max((kid for kid, (n, _) in keys.items() if n == current), default=None)
    return {
        "account": account,
        "currentGeneration": current,
        "generations": [{"generation": n, "keyId": kid, "key": b64(k), "current": kid == current_id}
                        for kid, (n, k) in sorted(keys.items(), key=lambda entry: (entry[1][0], entry[0]))],
        "deviceSigningSeed": b64(seed),
        "deviceBoxSecret": b64(box),
    }


# --- the worked example -----------------------------------------------------

def example() -> dict:
    """FORMAT.md "Worked example", computed from its fixed inputs."""
    passphrase = "correct horse battery staple"
    salt = bytes(range(0x00, 0x10))
    ops, mem = 2, 65536
    account, kind, generation = "alice", KIND_GENERATION, 1
    key = bytes(range(0x20, 0x40))
    nonce = bytes(range(0x40, 0x58))
    kek = argon2id(passphrase.encode("utf-8"), salt, ops, mem)
    aad = wrap_aad(account, kind, generation)
    wrapped = wrap(key, kek, account, kind, generation, nonce)
    if unwrap(wrapped, kek, account, kind, generation) != key:
        raise RecoveryError("the worked example does not round-trip")
    return {
        "passphrase": passphrase,
        "saltHex": salt.hex(),
        "opsLimit": ops,
        "memLimitBytes": mem,
        "account": account,
        "kind": kind,
        "generation": generation,
        "keyHex": key.hex(),
        "nonceHex": nonce.hex(),
        "kekHex": kek.hex(),
        "aadHex": aad.hex(),
        "wrappedHex": wrapped.hex(),
        "keyIdHex": key_id(key),
    }


LABEL_KIT_V1 = "keyvault/v1/recovery-kit"
LABEL_KIT_V2 = "keyvault/v2/recovery-kit"
MAX_MILLIS = 253_402_300_799_999


def read_field(data: bytes, offset: int):
    if offset + 4 > len(data):
        raise RecoveryError("a field is cut short")
    length = int.from_bytes(data[offset:offset + 4], "big")
    if offset + 4 + length > len(data):
        raise RecoveryError("a field is cut short")
    return data[offset + 4:offset + 4 + length], offset + 4 + length


def open_kit(kit: bytes, passphrase: str) -> dict:
    """FORMAT.md "Recovery kit": the keys, and for version 2 the kit's member."""
    header, offset = read_field(kit, 0)
    sealed, offset = read_field(kit, offset)
    if offset != len(kit):
        raise RecoveryError("trailing bytes after the kit")
    label, o = read_field(header, 0)
    versions = {LABEL_KIT_V1.encode(): 1, LABEL_KIT_V2.encode(): 2}
    if label not in versions:
        raise RecoveryError("not a recovery kit")
    version = versions[label]
    account, o = read_field(header, o)
    ops, o = read_field(header, o)
    mem, o = read_field(header, o)
    salt, o = read_field(header, o)
    if o != len(header) or len(ops) != 8 or len(mem) != 8 or len(salt) != SALT_BYTES:
        raise RecoveryError("a malformed kit header")
    kek = argon2id(passphrase.encode(), salt, int.from_bytes(ops, "big"), int.from_bytes(mem, "big"))
    plain = xchacha_open(kek, sealed[:NONCE_BYTES], sealed[NONCE_BYTES:], header)
    if plain is None:
        raise RecoveryError("wrong kit passphrase, or the kit was changed")
    count = int.from_bytes(plain[:4], "big")
    end = 4 + 60 * count
    rest = plain[end:]
    if len(plain) < end or not ((version == 1 and rest == b"") or (version == 2 and rest in (b"\x00",))
                                or (version == 2 and len(rest) == 65 and rest[0] == 1)):
        raise RecoveryError("a kit's length does not match its count")
    generations = []
    for i in range(count):
        r = plain[4 + 60 * i:4 + 60 * (i + 1)]
        number, ms, kid, key = int.from_bytes(r[:4], "big"), int.from_bytes(r[4:12], "big"), r[12:28], r[28:60]
        if not 1 <= number <= 2**31 - 1 or ms > MAX_MILLIS or key_id(key) != kid.hex():
            raise RecoveryError("a kit's key is out of range or does not match its key ID")
        generations.append({"generation": number, "createdAtMs": ms, "keyId": kid.hex(), "key": base64.b64encode(key).decode()})
    out = {"account": account.decode(), "version": version, "generations": generations}
    if version == 2 and len(rest) == 65:
        seed, box_secret = rest[1:33], rest[33:65]
        signing_public, _ = ed25519_keypair(seed)
        out["member"] = {"deviceId": device_id(signing_public, x25519_public_key(box_secret)),
                         "signingPublicKey": signing_public.hex()}
    return out


def read_passphrase(path):
    if path is not None:
        with open(path, "r", encoding="utf-8") as f:
            line = f.readline()
    else:
        line = sys.stdin.readline()
    if line.endswith("\n"):
        line = line[:-1]
    return line


def main(argv) -> int:
    parser = argparse.ArgumentParser(description="Recover an account's keys from a keyvaultd vault (docs/FORMAT.md).")
    parser.add_argument("data_dir", nargs="?", metavar="DATA_DIR")
    parser.add_argument("account", nargs="?", metavar="ACCOUNT")
    parser.add_argument("--passphrase-file", metavar="F", help="read the passphrase from F's first line instead of stdin")
    parser.add_argument("--example", action="store_true", help="print the worked example from docs/FORMAT.md")
    parser.add_argument("--kit", metavar="FILE", help="open a recovery kit instead of a vault (kit passphrase on stdin or --passphrase-file)")
    args = parser.parse_args(argv)
    try:
        if args.example:
            result = example()
        elif args.kit:
            with open(args.kit, "rb") as f:
                result = open_kit(f.read(), read_passphrase(args.passphrase_file))
        else:
            if args.data_dir is None or args.account is None:
                parser.error("DATA_DIR and ACCOUNT are required (or --example)")
            result = recover(args.data_dir, args.account, read_passphrase(args.passphrase_file))
    except SodiumError as error:  # RecoveryError, or libsodium missing
        print(f"recover-vault: {error}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
