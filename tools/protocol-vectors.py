#!/usr/bin/env python3
"""Test vectors for the keyvaultd relay protocol (docs/PROTOCOL.md).

An independent implementation of the protocol's encodings: Python 3's
standard library plus the system libsodium through ctypes. From fixed seeds
it builds device A's genesis entry, device B's enrollment request (which
commits to B's pairing secret), A's challenge to that request, B's reveal of
its secret, the pairing code they yield, A's approval of B, and (as a
payload, before sealing, since a sealed box is randomised) A's key share to
B and B's acknowledgement.
Ed25519 signatures are deterministic, so every value is reproducible.

    protocol-vectors.py              print the vectors as JSON
    protocol-vectors.py --write      also write Tests/KeyVaultTests/vectors/protocol.json
    protocol-vectors.py --check      exit 1 if protocol.json differs from what this computes

Before printing, it checks its own output: every signature verifies, every
record decodes strictly back to its fields, and the key share seals to B and
opens with B's secret key.
"""

import argparse
import ctypes
import json
import os
import sys

from sodium_ctypes import (SIGNATURE_BYTES, SodiumError, blake2b, ed25519_keypair, ed25519_sign, ed25519_verify, labeled,
                          sodium, u32be, u64be, x25519_public_key)

# docs/PROTOCOL.md, "Conventions": the labels.
LABEL_KEY_ID = "keyvault/v1/key-id"
LABEL_DEVICE_ID = "keyvault/v1/device-id"
LABEL_ENROLL_REQUEST = "keyvault/v1/enroll-request"
LABEL_REQUEST_HASH = "keyvault/v1/request-hash"
LABEL_PAIRING_CODE = "keyvault/v1/pairing-code"
LABEL_PAIRING_COMMIT = "keyvault/v1/pairing-commit"
LABEL_ENROLL_CHALLENGE = "keyvault/v1/enroll-challenge"
LABEL_ENROLL_REVEAL = "keyvault/v1/enroll-reveal"
LABEL_LOG_ENTRY = "keyvault/v1/log-entry"
LABEL_LOG_HASH = "keyvault/v1/log-hash"
LABEL_SHARE = "keyvault/v1/share"
LABEL_ACK = "keyvault/v1/ack"

KEY_BYTES = 32
SEAL_BYTES = 48          # crypto_box_SEALBYTES: ephemeral public key (32) + MAC (16)
ZERO_HASH = bytes(32)
ACCOUNT_CHARS = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")

VECTORS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "KeyVaultTests", "vectors", "protocol.json")


class VectorError(SodiumError):
    pass


class Rejected(Exception):
    """A record refused under PROTOCOL.md; `outcome` is one of the outcomes
    the negative vectors expect: malformed, badSignature, untrustedSigner,
    fork, gap, invalid."""

    def __init__(self, outcome: str, why: str):
        super().__init__(f"{outcome}: {why}")
        self.outcome = outcome


# --- sealed boxes (the rest of libsodium: tools/sodium_ctypes.py) ----------


def box_seal(message: bytes, public: bytes) -> bytes:
    out = ctypes.create_string_buffer(len(message) + SEAL_BYTES)
    if sodium().crypto_box_seal(out, message, len(message), public) != 0:
        raise VectorError("crypto_box_seal failed")
    return out.raw


def box_seal_open(sealed: bytes, public: bytes, secret: bytes):
    if len(sealed) < SEAL_BYTES:
        return None
    out = ctypes.create_string_buffer(max(len(sealed) - SEAL_BYTES, 1))
    if sodium().crypto_box_seal_open(out, sealed, len(sealed), public, secret) != 0:
        return None
    return out.raw[:len(sealed) - SEAL_BYTES]


# --- PROTOCOL.md "Encoding" -------------------------------------------------

class Writer:
    """A sequence of fields, each u32be(length) || bytes."""

    def __init__(self):
        self.out = b""

    def bytes(self, value: bytes):
        self.out += u32be(len(value)) + value
        return self

    def string(self, value: str):
        return self.bytes(value.encode("utf-8"))

    def u64(self, value: int):
        return self.bytes(u64be(value))


class Reader:
    """Strict decoding: a field cut short, a wrong size or trailing bytes is refused."""

    def __init__(self, data: bytes):
        self.data, self.offset = data, 0

    def bytes(self, count=None, what="a field") -> bytes:
        if self.offset + 4 > len(self.data):
            raise Rejected("malformed", "a field is cut short")
        length = int.from_bytes(self.data[self.offset:self.offset + 4], "big")
        self.offset += 4
        if length > len(self.data) - self.offset:
            raise Rejected("malformed", "a field runs past the end")
        value = self.data[self.offset:self.offset + length]
        self.offset += length
        if count is not None and len(value) != count:
            raise Rejected("malformed", f"{what} must be {count} bytes")
        return value

    def string(self) -> str:
        try:
            return self.bytes().decode("utf-8")  # strict: no replacement characters
        except UnicodeDecodeError:
            raise Rejected("malformed", "a text field is not UTF-8") from None

    def u64(self) -> int:
        return int.from_bytes(self.bytes(8, "an integer"), "big")

    def account(self) -> str:
        value = self.string()
        if not 1 <= len(value) <= 128 or any(c not in ACCOUNT_CHARS for c in value):
            raise Rejected("malformed", "bad account ID")
        return value

    def generation(self) -> int:
        value = self.u64()
        if value > 2**63 - 1:
            raise Rejected("malformed", "a generation number above 2^63 - 1")
        return value

    def label(self, expected: str):
        if self.string() != expected:
            raise Rejected("malformed", f"not a {expected} record")

    def finish(self):
        if self.offset != len(self.data):
            raise Rejected("malformed", "trailing bytes after the record")


def labeled_hash(label: str, parts, size: int = 32) -> bytes:
    """BLAKE2b(label || 0x00 || for each part: u32be(len) || part), size bytes."""
    return blake2b(labeled(label, parts), size)


# --- PROTOCOL.md "Identifiers" ----------------------------------------------

def device_id(signing_public: bytes, box_public: bytes) -> str:
    return labeled_hash(LABEL_DEVICE_ID, [signing_public, box_public], 16).hex()


def key_id(key: bytes) -> bytes:
    return labeled_hash(LABEL_KEY_ID, [key], 16)


def write_device(w: Writer, device: dict):
    w.bytes(device["signing"]).bytes(device["box"]).string(device["name"])


def read_device(r: Reader) -> dict:
    device = {"signing": r.bytes(32, "a signing key"), "box": r.bytes(32, "a box key"), "name": r.string()}
    if len(device["name"].encode("utf-8")) > 128:
        raise Rejected("malformed", "a device name is longer than 128 bytes")
    return device


def outer(signed: bytes, signature: bytes) -> bytes:
    return Writer().bytes(signed).bytes(signature).out


def split_outer(data: bytes):
    r = Reader(data)
    signed = r.bytes()
    signature = r.bytes(SIGNATURE_BYTES, "a signature")
    r.finish()
    return signed, signature


# --- PROTOCOL.md "Circle log entry" -----------------------------------------

def log_entry_signed(account, seq, previous, signer, created_at, kind, body: dict) -> bytes:
    w = Writer().string(LABEL_LOG_ENTRY).string(account).u64(seq).bytes(previous).string(signer).u64(created_at).string(kind)
    if kind == "genesis":
        write_device(w, body["device"])
        w.u64(body["generation"]).bytes(body["keyID"]).u64(body["keyCreatedAt"])
    elif kind == "approve":
        write_device(w, body["device"])
        w.bytes(body["requestHash"])
    elif kind == "revoke":
        w.string(body["deviceID"])
    elif kind == "announce":
        w.u64(body["generation"]).bytes(body["keyID"]).u64(body["keyCreatedAt"])
    else:
        raise VectorError(f"unknown entry kind {kind}")
    return w.out


def decode_log_entry(data: bytes) -> dict:
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_LOG_ENTRY)
    entry = {"account": r.account(), "seq": r.u64(), "previousHash": r.bytes(32, "a previous hash"),
             "signer": r.string(), "createdAt": r.u64(), "kind": r.string()}
    kind = entry["kind"]
    if kind == "genesis":
        body = {"device": read_device(r), "generation": r.generation(), "keyID": r.bytes(16, "a key ID"), "keyCreatedAt": r.u64()}
    elif kind == "approve":
        body = {"device": read_device(r), "requestHash": r.bytes(32, "a request hash")}
    elif kind == "revoke":
        body = {"deviceID": r.string()}
    elif kind == "announce":
        body = {"generation": r.generation(), "keyID": r.bytes(16, "a key ID"), "keyCreatedAt": r.u64()}
    else:
        raise Rejected("malformed", f"unknown entry kind '{kind}'")
    r.finish()
    entry.update(body=body, signed=signed, signature=signature,
                 hash=labeled_hash(LABEL_LOG_HASH, [signed, signature]))
    return entry


# --- PROTOCOL.md "Verification rules" ---------------------------------------

def new_circle(account: str) -> dict:
    return {"account": account, "hashes": [], "members": {}, "generations": set()}


def head(circle) -> bytes:
    return circle["hashes"][-1] if circle["hashes"] else ZERO_HASH


def apply(circle: dict, data: bytes) -> str:
    """Verifies one encoded entry against `circle` and applies it in place.
    Returns "accepted" or "noop"; raises Rejected and changes nothing otherwise."""
    e = decode_log_entry(data)
    if e["account"] != circle["account"]:
        raise Rejected("invalid", "an entry for another account")
    n = len(circle["hashes"])
    if e["seq"] < n:
        if circle["hashes"][e["seq"]] != e["hash"]:
            raise Rejected("fork", f"a different entry {e['seq']}")
        return "noop"
    if e["seq"] > n:
        raise Rejected("gap", f"expected entry {n}, got {e['seq']}")
    if e["previousHash"] != head(circle):
        raise Rejected("fork", f"entry {e['seq']} does not chain to the head")
    members = dict(circle["members"])
    generations = set(circle["generations"])
    body = e["body"]
    if e["kind"] == "genesis":
        if e["seq"] != 0:
            raise Rejected("invalid", "genesis after entry 0")
        device = body["device"]
        if e["signer"] != device_id(device["signing"], device["box"]) or \
                not ed25519_verify(device["signing"], e["signature"], e["signed"]):
            raise Rejected("badSignature", "the genesis entry")
        if body["generation"] != 1:
            raise Rejected("invalid", "genesis must announce generation 1")
        members[e["signer"]] = {"keys": device, "revoked": False}
        generations.add((1, body["keyID"]))
    else:
        if e["seq"] == 0:
            raise Rejected("invalid", "entry 0 must be a genesis")
        signer = circle["members"].get(e["signer"])
        if signer is None or signer["revoked"]:
            raise Rejected("untrustedSigner", e["signer"])
        if not ed25519_verify(signer["keys"]["signing"], e["signature"], e["signed"]):
            raise Rejected("badSignature", f"entry {e['seq']}")
        if e["kind"] == "approve":
            device = body["device"]
            new_id = device_id(device["signing"], device["box"])
            if new_id in members:
                raise Rejected("invalid", f"device {new_id} is already in the circle")
            members[new_id] = {"keys": device, "revoked": False}
        elif e["kind"] == "revoke":
            target = members.get(body["deviceID"])
            if target is None or target["revoked"]:
                raise Rejected("invalid", "revoking a device that is not trusted")
            if sum(1 for m in members.values() if not m["revoked"]) <= 1:
                raise Rejected("invalid", "revoking the last device")
            members[body["deviceID"]] = dict(target, revoked=True)
        else:  # announce
            pair = (body["generation"], body["keyID"])
            if pair in generations:
                raise Rejected("invalid", "generation already announced with that key")
            generations.add(pair)
    circle["hashes"].append(e["hash"])
    circle["members"], circle["generations"] = members, generations
    return "accepted"


def outcome_of(action) -> str:
    try:
        return action()
    except Rejected as rejected:
        return rejected.outcome


# --- PROTOCOL.md "Enrollment request" ---------------------------------------

def request_signed(account, device, commitment, head_hash, requested_at) -> bytes:
    w = Writer().string(LABEL_ENROLL_REQUEST).string(account)
    write_device(w, device)
    return w.bytes(commitment).bytes(head_hash).u64(requested_at).out


def decode_request(data: bytes) -> dict:
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_ENROLL_REQUEST)
    request = {"account": r.account(), "device": read_device(r), "commitment": r.bytes(32, "a commitment"),
               "headHash": r.bytes(32, "a head hash"), "requestedAt": r.u64()}
    r.finish()
    if not ed25519_verify(request["device"]["signing"], signature, signed):
        raise Rejected("badSignature", "an enrollment request")
    request["hash"] = labeled_hash(LABEL_REQUEST_HASH, [data])
    return request


# --- PROTOCOL.md "Pairing code", "Enrollment challenge", "Enrollment reveal" --

def pairing_commitment(secret: bytes) -> bytes:
    return labeled_hash(LABEL_PAIRING_COMMIT, [secret])


def pairing_code(request_hash: bytes, challenge_nonce: bytes, secret: bytes) -> str:
    digest = labeled_hash(LABEL_PAIRING_CODE, [request_hash, challenge_nonce, secret], 16)
    return f"{int.from_bytes(digest[:8], 'big') % 1_000_000:06d}"


def challenge_signed(account, request_hash: bytes, challenger: str, nonce: bytes) -> bytes:
    return Writer().string(LABEL_ENROLL_CHALLENGE).string(account).bytes(request_hash).string(challenger).bytes(nonce).out


def decode_challenge(data: bytes, signer_key) -> dict:
    """`signer_key(device ID)` is the challenger's signing key if it is a
    trusted member of the receiver's verified circle, else None."""
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_ENROLL_CHALLENGE)
    challenge = {"account": r.account(), "requestHash": r.bytes(32, "a request hash"), "challenger": r.string(),
                 "nonce": r.bytes(32, "a nonce")}
    r.finish()
    key = signer_key(challenge["challenger"])
    if key is None:
        raise Rejected("untrustedSigner", challenge["challenger"])
    if not ed25519_verify(key, signature, signed):
        raise Rejected("badSignature", "a challenge")
    challenge["hash"] = labeled_hash(LABEL_ENROLL_CHALLENGE, [data])
    return challenge


def take_challenge(circle: dict, data: bytes) -> str:
    def trusted_key(device):
        member = circle["members"].get(device)
        return member["keys"]["signing"] if member and not member["revoked"] else None
    challenge = decode_challenge(data, trusted_key)
    if challenge["account"] != circle["account"]:
        raise Rejected("invalid", "a challenge for another account")
    return "accepted"


def reveal_signed(account, request_hash: bytes, challenge_hash: bytes, secret: bytes) -> bytes:
    return Writer().string(LABEL_ENROLL_REVEAL).string(account).bytes(request_hash).bytes(challenge_hash).bytes(secret).out


def decode_reveal(data: bytes, request: dict) -> dict:
    """Checks a reveal against the decoded request it answers."""
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_ENROLL_REVEAL)
    reveal = {"account": r.account(), "requestHash": r.bytes(32, "a request hash"),
              "challengeHash": r.bytes(32, "a challenge hash"), "secret": r.bytes(32, "a secret")}
    r.finish()
    if reveal["requestHash"] != request["hash"] or reveal["account"] != request["account"]:
        raise Rejected("invalid", "a reveal for another request")
    if not ed25519_verify(request["device"]["signing"], signature, signed):
        raise Rejected("badSignature", "a reveal")
    if pairing_commitment(reveal["secret"]) != request["commitment"]:
        raise Rejected("invalid", "a reveal that does not match the request's commitment")
    return reveal


# --- PROTOCOL.md "Key share" and "Acknowledgement" --------------------------

def share_header(account, generation, kid: bytes, created_at, sender, recipient) -> bytes:
    return Writer().string(LABEL_SHARE).string(account).u64(generation).bytes(kid).u64(created_at) \
        .string(sender).string(recipient).out


def open_share(sealed: bytes, box_public: bytes, box_secret: bytes, sender_key) -> dict:
    plain = box_seal_open(sealed, box_public, box_secret)
    if plain is None:
        raise Rejected("malformed", "the share does not open with this device's key")
    n = len(plain)
    if n < 4 + KEY_BYTES + SIGNATURE_BYTES:
        raise Rejected("malformed", "a share is too short")
    header_length = int.from_bytes(plain[:4], "big")
    if 4 + header_length + KEY_BYTES + SIGNATURE_BYTES != n:
        raise Rejected("malformed", "a share's lengths do not add up")
    r = Reader(plain[4:4 + header_length])
    r.label(LABEL_SHARE)
    header = {"account": r.account(), "generation": r.generation(), "keyID": r.bytes(16, "a key ID"),
              "createdAt": r.u64(), "sender": r.string(), "recipient": r.string()}
    r.finish()
    signer = sender_key(header["sender"])
    if signer is None:
        raise Rejected("untrustedSigner", header["sender"])
    if not ed25519_verify(signer, plain[n - SIGNATURE_BYTES:], plain[:n - SIGNATURE_BYTES]):
        raise Rejected("badSignature", "a key share")
    key = plain[4 + header_length:n - SIGNATURE_BYTES]
    if key_id(key) != header["keyID"]:
        raise Rejected("invalid", "a share's key does not match its key ID")
    return {"header": header, "key": key}


def take_share(circle: dict, sealed: bytes, me: str, box_public: bytes, box_secret: bytes) -> str:
    """PROTOCOL.md "Key share", rules 1 to 8, for the device `me` whose verified circle is `circle`."""
    def trusted_key(sender):
        member = circle["members"].get(sender)
        return member["keys"]["signing"] if member and not member["revoked"] else None
    share = open_share(sealed, box_public, box_secret, trusted_key)
    header = share["header"]
    if header["account"] != circle["account"] or header["recipient"] != me:
        raise Rejected("invalid", "a share for someone else")
    if (header["generation"], header["keyID"]) not in circle["generations"]:
        raise Rejected("invalid", "a generation the circle never announced with that key")
    return "accepted"


def ack_signed(account, generation, kid: bytes, device, received_at) -> bytes:
    return Writer().string(LABEL_ACK).string(account).u64(generation).bytes(kid).string(device).u64(received_at).out


# --- the vectors ------------------------------------------------------------

def relay_request_vector(seed: bytes, signing_public: bytes, box_public: bytes, signer_id: str) -> dict:
    """docs/RELAY.md, "Signed requests": an RFC 9421 ed25519 signature over a
    GET of the records, and the identity nonce of the same device."""
    import base64
    import hashlib
    body = b""
    digest = "sha-256=:" + base64.b64encode(hashlib.sha256(body).digest()).decode() + ":"
    nonce = base64.b64encode(bytes(range(16))).decode()
    params = ('("@method" "@path" "@query" "content-digest");created=1795300000;nonce="%s";keyid="%s";alg="ed25519"'
              % (nonce, signer_id))
    lines = ['"@method": GET', '"@path": /v1/accounts/alice/records', '"@query": ?after=0&limit=500',
             '"content-digest": ' + digest, '"@signature-params": ' + params]
    base = "\n".join(lines).encode()
    _, secret = ed25519_keypair(seed)
    signature = ed25519_sign(secret, base)
    assert ed25519_verify(signing_public, signature, base)
    return {
        "method": "GET", "path": "/v1/accounts/alice/records", "query": "after=0&limit=500",
        "created": 1795300000, "nonce": nonce, "keyid": signer_id,
        "contentDigest": digest,
        "signatureInput": "kv=" + params,
        "signatureBase": base.decode(),
        "signature": "kv=:" + base64.b64encode(signature).decode() + ":",
        "identityNonce": hashlib.sha256(signing_public + box_public).hexdigest(),
    }


def compute() -> dict:
    account = "alice"
    seed_a, seed_b = b"\x01" * 32, b"\x02" * 32
    box_secret_a, box_secret_b = b"\x03" * 32, b"\x04" * 32
    key = bytes(range(0x20, 0x40))
    secret = b"\x11" * 32           # B's pairing secret
    challenge_nonce = b"\x12" * 32  # A's challenge nonce
    genesis_at = 1795300000000      # ms; also the key's creation time
    request_at = 1795300060000
    approve_at = 1795300120000
    ack_at = 1795300180000

    sign_pk_a, sign_sk_a = ed25519_keypair(seed_a)
    sign_pk_b, sign_sk_b = ed25519_keypair(seed_b)
    box_pk_a, box_pk_b = x25519_public_key(box_secret_a), x25519_public_key(box_secret_b)
    device_a = {"signing": sign_pk_a, "box": box_pk_a, "name": "laptop"}
    device_b = {"signing": sign_pk_b, "box": box_pk_b, "name": "phone"}
    id_a, id_b = device_id(sign_pk_a, box_pk_a), device_id(sign_pk_b, box_pk_b)
    kid = key_id(key)

    # Entry 0: A's genesis, self-signed, announcing generation 1.
    genesis_body = {"device": device_a, "generation": 1, "keyID": kid, "keyCreatedAt": genesis_at}
    genesis_signed = log_entry_signed(account, 0, ZERO_HASH, id_a, genesis_at, "genesis", genesis_body)
    genesis_sig = ed25519_sign(sign_sk_a, genesis_signed)
    genesis = outer(genesis_signed, genesis_sig)
    genesis_hash = labeled_hash(LABEL_LOG_HASH, [genesis_signed, genesis_sig])

    # B's enrollment request against the head it saw (the genesis), committing to its secret.
    commitment = pairing_commitment(secret)
    req_signed = request_signed(account, device_b, commitment, genesis_hash, request_at)
    req_sig = ed25519_sign(sign_sk_b, req_signed)
    request = outer(req_signed, req_sig)
    request_hash = labeled_hash(LABEL_REQUEST_HASH, [request])

    # A's challenge to the request, then B's reveal of its secret, bound to that challenge.
    ch_signed = challenge_signed(account, request_hash, id_a, challenge_nonce)
    ch_sig = ed25519_sign(sign_sk_a, ch_signed)
    challenge = outer(ch_signed, ch_sig)
    challenge_hash = labeled_hash(LABEL_ENROLL_CHALLENGE, [challenge])
    rv_signed = reveal_signed(account, request_hash, challenge_hash, secret)
    rv_sig = ed25519_sign(sign_sk_b, rv_signed)
    reveal = outer(rv_signed, rv_sig)
    code = pairing_code(request_hash, challenge_nonce, secret)

    # Entry 1: A approves B.
    approve_body = {"device": device_b, "requestHash": request_hash}
    approve_signed = log_entry_signed(account, 1, genesis_hash, id_a, approve_at, "approve", approve_body)
    approve_sig = ed25519_sign(sign_sk_a, approve_signed)
    approve = outer(approve_signed, approve_sig)
    approve_hash = labeled_hash(LABEL_LOG_HASH, [approve_signed, approve_sig])

    # A's share of generation 1 to B: the payload before sealing (sealing is randomised).
    header = share_header(account, 1, kid, genesis_at, id_a, id_b)
    payload = u32be(len(header)) + header + key
    share_sig = ed25519_sign(sign_sk_a, payload)
    share_plain = payload + share_sig

    # B's acknowledgement.
    ack_s = ack_signed(account, 1, kid, id_b, ack_at)
    ack_sig = ed25519_sign(sign_sk_b, ack_s)
    ack = outer(ack_s, ack_sig)

    # --- self-checks ---
    g = decode_log_entry(genesis)
    assert g["hash"] == genesis_hash and g["seq"] == 0 and g["previousHash"] == ZERO_HASH
    assert g["signer"] == device_id(g["body"]["device"]["signing"], g["body"]["device"]["box"])
    assert ed25519_verify(g["body"]["device"]["signing"], g["signature"], g["signed"])
    assert g["body"]["generation"] == 1
    rq = decode_request(request)
    assert rq["headHash"] == genesis_hash and rq["device"] == device_b and rq["hash"] == request_hash
    assert rq["commitment"] == commitment
    ch = decode_challenge(challenge, lambda device: sign_pk_a if device == id_a else None)
    assert ch["hash"] == challenge_hash and ch["requestHash"] == request_hash and ch["challenger"] == id_a
    rv = decode_reveal(reveal, rq)
    assert rv["challengeHash"] == challenge_hash and rv["secret"] == secret
    assert pairing_code(rq["hash"], ch["nonce"], rv["secret"]) == code and len(code) == 6
    a = decode_log_entry(approve)
    assert a["hash"] == approve_hash and a["seq"] == 1 and a["previousHash"] == genesis_hash
    assert a["signer"] == id_a and ed25519_verify(sign_pk_a, a["signature"], a["signed"])
    assert a["body"]["requestHash"] == request_hash and a["body"]["device"] == device_b
    opened = open_share(box_seal(share_plain, box_pk_b), box_pk_b, box_secret_b,
                        lambda sender: sign_pk_a if sender == id_a else None)
    assert opened["key"] == key and opened["header"]["recipient"] == id_b
    ack_signed_back, ack_sig_back = split_outer(ack)
    assert ed25519_verify(sign_pk_b, ack_sig_back, ack_signed_back)

    negative = negative_vectors(dict(locals(), share_plain=share_plain))

    return {
        "inputs": {
            "account": account,
            "deviceA": {"name": "laptop", "ed25519SeedHex": seed_a.hex(), "x25519SecretHex": box_secret_a.hex()},
            "deviceB": {"name": "phone", "ed25519SeedHex": seed_b.hex(), "x25519SecretHex": box_secret_b.hex()},
            "keyHex": key.hex(),
            "generation": 1,
            "genesisCreatedAtMs": genesis_at,
            "keyCreatedAtMs": genesis_at,
            "pairingSecretHex": secret.hex(),
            "requestedAtMs": request_at,
            "challengeNonceHex": challenge_nonce.hex(),
            "approveCreatedAtMs": approve_at,
            "ackReceivedAtMs": ack_at,
        },
        "signingPublicKeyA": sign_pk_a.hex(),
        "boxPublicKeyA": box_pk_a.hex(),
        "signingPublicKeyB": sign_pk_b.hex(),
        "boxPublicKeyB": box_pk_b.hex(),
        "deviceIdA": id_a,
        "deviceIdB": id_b,
        "keyId": kid.hex(),
        "genesisSignedHex": genesis_signed.hex(),
        "genesisSignature": genesis_sig.hex(),
        "genesisHex": genesis.hex(),
        "genesisHash": genesis_hash.hex(),
        "requestSignedHex": req_signed.hex(),
        "requestSignature": req_sig.hex(),
        "requestHex": request.hex(),
        "requestHash": request_hash.hex(),
        "pairingSecretHex": secret.hex(),
        "commitmentHex": commitment.hex(),
        "challengeSignedHex": ch_signed.hex(),
        "challengeSignature": ch_sig.hex(),
        "challengeHex": challenge.hex(),
        "challengeHash": challenge_hash.hex(),
        "revealSignedHex": rv_signed.hex(),
        "revealSignature": rv_sig.hex(),
        "revealHex": reveal.hex(),
        "pairingCode": code,
        "approveSignedHex": approve_signed.hex(),
        "approveSignature": approve_sig.hex(),
        "approveHex": approve.hex(),
        "approveHash": approve_hash.hex(),
        "shareHeaderHex": header.hex(),
        "sharePlaintextHex": share_plain.hex(),
        "ackHex": ack.hex(),
        "relayRequest": relay_request_vector(seed_a, sign_pk_a, box_pk_a, id_a),
        "cases": negative,
    }


def negative_vectors(v: dict) -> list:
    """One outcome each (PROTOCOL.md "Test vectors", "Cases"). A log case
    applies `log` in order to an empty circle of `alice`, then `entry`; a
    request case decodes `request`; a challenge case decodes it with the
    circle after `log` naming the trusted signers; a reveal case checks it
    against B's request (`requestHex`); a share case seals `sharePlaintext`
    to B and has B take it in, with the circle after `log`."""
    account, id_a, id_b = v["account"], v["id_a"], v["id_b"]
    sk_a, sk_b = v["sign_sk_a"], v["sign_sk_b"]
    device_a, device_b = v["device_a"], v["device_b"]
    genesis, approve, genesis_hash = v["genesis"], v["approve"], v["genesis_hash"]
    key, kid, t = v["key"], v["kid"], v["genesis_at"]
    other_key = bytes(range(0x40, 0x60))

    def entry(seq, previous, signer_id, signer_sk, kind, body, created_at=None):
        signed = log_entry_signed(account, seq, previous, signer_id, created_at or t + 60000 * (seq + 1), kind, body)
        return outer(signed, ed25519_sign(signer_sk, signed))

    def entry_hash(data):
        return decode_log_entry(data)["hash"]

    def request(commitment=v["commitment"], name="phone", label=LABEL_ENROLL_REQUEST, requested_at=v["request_at"], tamper=None):
        w = Writer().string(label).string(account)
        write_device(w, dict(device_b, name=name))
        signed = w.bytes(commitment).bytes(genesis_hash).u64(requested_at).out
        signature = ed25519_sign(sk_b, signed)
        return outer(tamper(signed) if tamper else signed, signature)

    def challenge(request_hash=v["request_hash"], challenger=id_a, signer_sk=sk_a, nonce=v["challenge_nonce"], challenge_account=account):
        signed = Writer().string(LABEL_ENROLL_CHALLENGE).string(challenge_account).bytes(request_hash).string(challenger).bytes(nonce).out
        return outer(signed, ed25519_sign(signer_sk, signed))

    def reveal(request_hash=v["request_hash"], challenge_hash=v["challenge_hash"], secret=v["secret"], signer_sk=sk_b):
        signed = reveal_signed(account, request_hash, challenge_hash, secret)
        return outer(signed, ed25519_sign(signer_sk, signed))

    def share(generation=1, share_kid=None, share_key=key, sender=id_a, sender_sk=sk_a, recipient=id_b, extra=b""):
        header = share_header(account, generation, share_kid or key_id(share_key), t, sender, recipient)
        payload = u32be(len(header)) + header + share_key
        return payload + ed25519_sign(sender_sk, payload) + extra

    genesis_2 = entry(0, ZERO_HASH, id_a, sk_a, "genesis", {"device": device_a, "generation": 1, "keyID": kid, "keyCreatedAt": t}, t + 1)
    revoke_b = entry(2, entry_hash(approve), id_a, sk_a, "revoke", {"deviceID": id_b})
    bad_sig = bytearray(approve)
    bad_sig[-1] ^= 0x01
    bad_challenge_sig = bytearray(v["challenge"])
    bad_challenge_sig[-1] ^= 0x01
    # Another request from B (a second request, one millisecond later) and its hash.
    other_request_hash = labeled_hash(LABEL_REQUEST_HASH, [request(requested_at=v["request_at"] + 1)])

    cases = [
        # log entries
        ("genesis", "log", [], genesis, "accepted"),
        ("approve after genesis", "log", [genesis], approve, "accepted"),
        ("approve replayed", "log", [genesis, approve], approve, "noop"),
        ("approve before genesis", "log", [], approve, "gap"),
        ("approve on another head", "log", [genesis_2], approve, "fork"),
        ("a second genesis", "log", [genesis], genesis_2, "fork"),
        ("genesis announcing generation 2", "log", [],
         entry(0, ZERO_HASH, id_a, sk_a, "genesis", {"device": device_a, "generation": 2, "keyID": kid, "keyCreatedAt": t}, t), "invalid"),
        ("genesis signed by another key", "log", [], outer(v["genesis_signed"], ed25519_sign(sk_b, v["genesis_signed"])), "badSignature"),
        ("approve with a flipped signature bit", "log", [genesis], bytes(bad_sig), "badSignature"),
        ("approve signed by a device not in the circle", "log", [genesis],
         entry(1, genesis_hash, id_b, sk_b, "approve", {"device": device_b, "requestHash": v["request_hash"]}), "untrustedSigner"),
        ("approve of a device already in the circle", "log", [genesis],
         entry(1, genesis_hash, id_a, sk_a, "approve", {"device": device_a, "requestHash": v["request_hash"]}), "invalid"),
        ("revoke of the last device", "log", [genesis], entry(1, genesis_hash, id_a, sk_a, "revoke", {"deviceID": id_a}), "invalid"),
        ("revoke", "log", [genesis, approve], revoke_b, "accepted"),
        ("entry signed by a revoked device", "log", [genesis, approve, revoke_b],
         entry(3, entry_hash(revoke_b), id_b, sk_b, "announce", {"generation": 2, "keyID": key_id(other_key), "keyCreatedAt": t}), "untrustedSigner"),
        ("announce", "log", [genesis, approve],
         entry(2, entry_hash(approve), id_b, sk_b, "announce", {"generation": 2, "keyID": key_id(other_key), "keyCreatedAt": t}), "accepted"),
        ("announce of a generation already announced with that key", "log", [genesis, approve],
         entry(2, entry_hash(approve), id_b, sk_b, "announce", {"generation": 1, "keyID": kid, "keyCreatedAt": t}), "invalid"),
        ("entry with a trailing byte", "log", [genesis], approve + b"\x00", "malformed"),
        # enrollment requests
        ("request", "request", [], v["request"], "accepted"),
        ("request with a trailing byte", "request", [], v["request"] + b"\x00", "malformed"),
        ("request with a 31-byte commitment", "request", [], request(commitment=v["commitment"][:31]), "malformed"),
        ("request with a 16-byte nonce in place of the commitment", "request", [], request(commitment=b"\x10" * 16), "malformed"),
        ("request under another label", "request", [], request(label=LABEL_ENROLL_REQUEST + "2"), "malformed"),
        ("request whose name was changed after signing", "request", [],
         request(tamper=lambda b: b.replace(b"phone", b"phony")), "badSignature"),
        # challenges, as B (or any device) checks them against the circle after `log`
        ("challenge", "challenge", [genesis], v["challenge"], "accepted"),
        ("challenge with a trailing byte", "challenge", [genesis], v["challenge"] + b"\x00", "malformed"),
        ("challenge with a 31-byte nonce", "challenge", [genesis], challenge(nonce=v["challenge_nonce"][:31]), "malformed"),
        ("challenge with a flipped signature bit", "challenge", [genesis], bytes(bad_challenge_sig), "badSignature"),
        ("challenge naming A, signed by B", "challenge", [genesis], challenge(signer_sk=sk_b), "badSignature"),
        ("challenge from a device not in the circle", "challenge", [genesis], challenge(challenger=id_b, signer_sk=sk_b), "untrustedSigner"),
        ("challenge from a revoked device", "challenge", [genesis, approve, revoke_b], challenge(challenger=id_b, signer_sk=sk_b), "untrustedSigner"),
        ("challenge for another account", "challenge", [genesis], challenge(challenge_account="bob"), "invalid"),
        # reveals, checked against B's request
        ("reveal", "reveal", [], v["reveal"], "accepted"),
        ("reveal with a trailing byte", "reveal", [], v["reveal"] + b"\x00", "malformed"),
        ("reveal with a 31-byte secret", "reveal", [], reveal(secret=v["secret"][:31]), "malformed"),
        ("reveal signed by A", "reveal", [], reveal(signer_sk=sk_a), "badSignature"),
        ("reveal whose secret does not match the commitment", "reveal", [], reveal(secret=b"\x13" * 32), "invalid"),
        ("reveal for another request", "reveal", [], reveal(request_hash=other_request_hash), "invalid"),
        # key shares, to B
        ("share", "share", [genesis, approve], v["share_plain"], "accepted"),
        ("share with a byte too many", "share", [genesis, approve], share(extra=b"\x00"), "malformed"),
        ("share from a device not in the circle", "share", [genesis], share(sender=id_b, sender_sk=sk_b), "untrustedSigner"),
        ("share from a revoked device", "share", [genesis, approve, revoke_b], share(sender=id_b, sender_sk=sk_b), "untrustedSigner"),
        ("share whose key does not match its key ID", "share", [genesis, approve], share(share_kid=kid, share_key=other_key), "invalid"),
        ("share addressed to another device", "share", [genesis, approve], share(recipient=id_a), "invalid"),
        ("share of a generation never announced", "share", [genesis, approve], share(generation=2, share_key=other_key), "invalid"),
        ("share of generation 1 with another key", "share", [genesis, approve], share(share_key=other_key), "invalid"),
    ]
    out = []
    for name, record, log, data, expect in cases:
        circle = new_circle(account)
        for earlier in log:
            if apply(circle, earlier) != "accepted":
                raise VectorError(f"case '{name}': its log does not apply")
        if record == "log":
            got = outcome_of(lambda: apply(circle, data))
        elif record == "request":
            got = outcome_of(lambda: decode_request(data) and "accepted")
        elif record == "challenge":
            got = outcome_of(lambda: take_challenge(circle, data))
        elif record == "reveal":
            got = outcome_of(lambda: decode_reveal(data, decode_request(v["request"])) and "accepted")
        else:
            sealed = box_seal(data, v["box_pk_b"])
            got = outcome_of(lambda: take_share(circle, sealed, id_b, v["box_pk_b"], v["box_secret_b"]))
        if got != expect:
            raise VectorError(f"case '{name}': expected {expect}, got {got}")
        case = {"name": name, "record": record, "log": [e.hex() for e in log]}
        case["sharePlaintextHex" if record == "share" else "hex"] = data.hex()
        case["expect"] = expect
        out.append(case)
    return out


def main(argv) -> int:
    parser = argparse.ArgumentParser(description="Compute the relay protocol test vectors (docs/PROTOCOL.md).")
    parser.add_argument("--write", action="store_true", help=f"write {os.path.normpath(VECTORS_PATH)}")
    parser.add_argument("--check", action="store_true", help="exit 1 if the vectors file differs")
    args = parser.parse_args(argv)
    try:
        vectors = compute()
    except (SodiumError, Rejected, AssertionError) as error:
        print(f"protocol-vectors: {error or 'a self-check failed'}", file=sys.stderr)
        return 1
    text = json.dumps(vectors, indent=2) + "\n"
    if args.check:
        try:
            with open(VECTORS_PATH, "r", encoding="utf-8") as f:
                stored = json.load(f)
        except OSError as error:
            print(f"protocol-vectors: {error}", file=sys.stderr)
            return 1
        if stored != vectors:
            print(f"protocol-vectors: {os.path.normpath(VECTORS_PATH)} differs from the computed vectors", file=sys.stderr)
            return 1
    if args.write:
        with open(VECTORS_PATH, "w", encoding="utf-8") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
