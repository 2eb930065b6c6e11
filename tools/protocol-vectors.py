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

`pairing` is pairing version 2 (docs/PAIRING.md): B's version 2 request,
A's pairing response, B's confirmation, A's approve entry and pairing
approval, from a fixed code, session and CPace scalars, with their cases.
CPace, ristretto255, SHA-512 and HMAC-SHA-512 there come from cpace_ref.py
and the standard library, not libsodium, which the Swift code runs them on.

    protocol-vectors.py              print the vectors as JSON
    protocol-vectors.py --write      also write Tests/KeyVaultTests/vectors/protocol.json
    protocol-vectors.py --check      exit 1 if protocol.json differs from what this computes

Before printing, it checks its own output: every signature verifies, every
record decodes strictly back to its fields, and the key share seals to B and
opens with B's secret key.
"""

import argparse
import ctypes
import hashlib
import hmac
import json
import os
import sys

import cpace_ref

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

# docs/PAIRING.md, "Conventions": the labels of pairing version 2.
LABEL_V2_ENROLL_REQUEST = "keyvault/v2/enroll-request"
LABEL_V2_REQUEST_HASH = "keyvault/v2/request-hash"
LABEL_PAIRING_CHANNEL = "keyvault/v2/pairing-channel"
LABEL_PAIRING_INITIATOR = "keyvault/v2/pairing-initiator"
LABEL_PAIRING_RESPONDER = "keyvault/v2/pairing-responder"
LABEL_PAIRING_RESPONSE = "keyvault/v2/pairing-response"
LABEL_PAIRING_CONFIRM = "keyvault/v2/pairing-confirm"
LABEL_PAIRING_APPROVAL = "keyvault/v2/pairing-approval"
LABEL_PAIRING_APPROVAL_KEY = "keyvault/v2/pairing-approval-key"

KEY_BYTES = 32
SEAL_BYTES = 48          # crypto_box_SEALBYTES: ephemeral public key (32) + MAC (16)
ZERO_HASH = bytes(32)
MAX_MILLIS = 253_402_300_799_999   # PROTOCOL.md "Encoding": the last millisecond of the year 9999
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
    elif kind == "recovery":
        write_device(w, body["device"])
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
    if entry["createdAt"] > MAX_MILLIS:
        raise Rejected("malformed", "a time past the year 9999")
    if kind == "genesis":
        body = {"device": read_device(r), "generation": r.generation(), "keyID": r.bytes(16, "a key ID"), "keyCreatedAt": r.u64()}
    elif kind == "approve":
        body = {"device": read_device(r), "requestHash": r.bytes(32, "a request hash")}
    elif kind == "recovery":
        body = {"device": read_device(r)}
    elif kind == "revoke":
        body = {"deviceID": r.string()}
    elif kind == "announce":
        body = {"generation": r.generation(), "keyID": r.bytes(16, "a key ID"), "keyCreatedAt": r.u64()}
    else:
        raise Rejected("malformed", f"unknown entry kind '{kind}'")
    r.finish()
    if body.get("keyCreatedAt", 0) > MAX_MILLIS:
        raise Rejected("malformed", "a time past the year 9999")
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
        # PROTOCOL.md "Recovery": a recovery kit's member signs only an approve.
        if signer.get("recovery") and e["kind"] != "approve":
            raise Rejected("invalid", "a recovery kit's member may sign only an approve")
        if e["kind"] in ("approve", "recovery"):
            device = body["device"]
            new_id = device_id(device["signing"], device["box"])
            if new_id in members:
                raise Rejected("invalid", f"device {new_id} is already in the circle")
            members[new_id] = {"keys": device, "revoked": False, "recovery": e["kind"] == "recovery"}
        elif e["kind"] == "revoke":
            target = members.get(body["deviceID"])
            if target is None or target["revoked"]:
                raise Rejected("invalid", "revoking a device that is not trusted")
            devices = sum(1 for m in members.values() if not m["revoked"] and not m.get("recovery"))
            if not target.get("recovery") and devices <= 1:
                raise Rejected("invalid", "revoking the last device")
            members[body["deviceID"]] = dict(target, revoked=True)
        else:  # announce
            pair = (body["generation"], body["keyID"])
            if pair in generations:
                raise Rejected("invalid", "generation already announced with that key")
            if body["generation"] > max(g for g, _ in generations) + 1:
                raise Rejected("invalid", "an announce skips past the next generation")
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
        # A trusted device: not revoked, not a recovery kit's member.
        return member["keys"]["signing"] if member and not member["revoked"] and not member.get("recovery") else None
    share = open_share(sealed, box_public, box_secret, trusted_key)
    header = share["header"]
    if header["account"] != circle["account"] or header["recipient"] != me:
        raise Rejected("invalid", "a share for someone else")
    if (header["generation"], header["keyID"]) not in circle["generations"]:
        raise Rejected("invalid", "a generation the circle never announced with that key")
    return "accepted"


def ack_signed(account, generation, kid: bytes, device, received_at) -> bytes:
    return Writer().string(LABEL_ACK).string(account).u64(generation).bytes(kid).string(device).u64(received_at).out


# --- docs/PAIRING.md: pairing version 2 -------------------------------------
# CPace, ristretto255, SHA-512 and HMAC-SHA-512 come from cpace_ref.py,
# hashlib and hmac, never from libsodium: the Swift side runs them on
# libsodium, and these vectors must not be libsodium checking itself.
# Ed25519 and the labelled hash H stay on sodium_ctypes, as above.

CODE_LIMIT = 4_294_000_000          # the largest multiple of 10^6 below 2^32
TAG_BYTES_V2 = 64                   # HMAC-SHA-512, untruncated
SESSION_BYTES = 16


def draw_code(random4: bytes):
    """PAIRING.md "The pairing code", one draw: the six digits of n mod 10^6,
    or None when n >= 4294000000 (draw again), so that every code is
    equally likely."""
    n = int.from_bytes(random4, "big")
    return f"{n % 1_000_000:06d}" if n < CODE_LIMIT else None


def pairing_channel(account: str, signing: bytes, box: bytes) -> bytes:
    """CPace's CI: binds the exchange to the account and to the new device's
    two public keys, so an exchange run for other keys yields another ISK."""
    return Writer().string(LABEL_PAIRING_CHANNEL).string(account).bytes(signing).bytes(box).out


def initiator_ad(new_device_id: str) -> bytes:
    """CPace's ADa: the new device's ID, as the 32-character string records carry."""
    return Writer().string(LABEL_PAIRING_INITIATOR).string(new_device_id).out


def responder_ad(responder: str, genesis_hash: bytes, head_hash: bytes, head_seq: int) -> bytes:
    """CPace's ADb: the circle as the responder sees it, so that Tb
    authenticates it under a key only a holder of the code can have."""
    return Writer().string(LABEL_PAIRING_RESPONDER).string(responder).bytes(genesis_hash).bytes(head_hash).u64(head_seq).out


def read_share(r: Reader) -> bytes:
    """A CPace share in a record: a canonical ristretto255 encoding that is
    not the identity, else the whole record is malformed (PAIRING.md,
    request field 7 and response field 5)."""
    share = r.bytes(cpace_ref.ELEMENT_BYTES, "a share")
    try:
        cpace_ref.decode(share)
    except cpace_ref.DecodeError as error:
        raise Rejected("malformed", f"a share is not a ristretto255 element ({error})") from None
    if share == cpace_ref.IDENTITY:
        raise Rejected("malformed", "a share is the identity element")
    return share


def initiator_share(prs: bytes, ci: bytes, sid: bytes, ya: bytes) -> dict:
    """The new device's half before it publishes: g from the code, Ya = ya * g."""
    g = cpace_ref.calculate_generator(prs, ci, sid)
    return {"g": g, "Ya": cpace_ref.scalar_mult(ya, g)}


def confirmation_keys(sid: bytes, k: bytes, ya_share: bytes, ada: bytes, yb_share: bytes, adb: bytes) -> dict:
    """ISK over the initiator-responder transcript, the draft's 10.4 mac_key,
    and both tags: what either side needs to confirm the other."""
    isk = cpace_ref.isk_ir(sid, k, ya_share, ada, yb_share, adb)
    key = cpace_ref.mac_key(sid, isk)
    return {"K": k, "ISK": isk, "macKey": key,
            "Ta": cpace_ref.confirmation_tag(key, ya_share, ada),
            "Tb": cpace_ref.confirmation_tag(key, yb_share, adb)}


def responder_half(prs: bytes, ci: bytes, sid: bytes, ya_share: bytes, ada: bytes, adb: bytes, yb: bytes) -> dict:
    """The trusted device's half, from the typed code: g, Yb = yb * g,
    K = scalar_mult_vfy(yb, Ya) (abort on the identity), ISK and the tags."""
    g = cpace_ref.calculate_generator(prs, ci, sid)
    yb_share = cpace_ref.scalar_mult(yb, g)
    out = confirmation_keys(sid, cpace_ref.shared_secret(yb, ya_share), ya_share, ada, yb_share, adb)
    out.update(g=g, Yb=yb_share)
    return out


def request_v2_signed(account, device, session: bytes, share: bytes, head_hash: bytes, requested_at) -> bytes:
    w = Writer().string(LABEL_V2_ENROLL_REQUEST).string(account)
    write_device(w, device)
    return w.bytes(session).bytes(share).bytes(head_hash).u64(requested_at).out


def decode_request_v2(data: bytes) -> dict:
    """PAIRING.md "Enrollment request (version 2)": strict decoding (a version
    1 request fails on its label), a share that is a non-identity element,
    then the new device's self-signature."""
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_V2_ENROLL_REQUEST)
    request = {"account": r.account(), "device": read_device(r), "session": r.bytes(SESSION_BYTES, "a session"),
               "share": read_share(r), "headHash": r.bytes(32, "a head hash"), "requestedAt": r.u64()}
    r.finish()
    if not ed25519_verify(request["device"]["signing"], signature, signed):
        raise Rejected("badSignature", "a version 2 enrollment request")
    request["hash"] = labeled_hash(LABEL_V2_REQUEST_HASH, [data])
    request["deviceID"] = device_id(request["device"]["signing"], request["device"]["box"])
    return request


def take_request_v2(circle: dict, data: bytes) -> str:
    """A receiver with the verified circle `circle`: the request rules, then its account."""
    if decode_request_v2(data)["account"] != circle["account"]:
        raise Rejected("invalid", "a request for another account")
    return "accepted"


def response_signed(account, request_hash: bytes, responder: str, share: bytes, genesis_hash: bytes,
                    head_hash: bytes, head_seq: int, tb: bytes) -> bytes:
    return Writer().string(LABEL_PAIRING_RESPONSE).string(account).bytes(request_hash).string(responder).bytes(share) \
        .bytes(genesis_hash).bytes(head_hash).u64(head_seq).bytes(tb).out


def trusted_signing_key(circle: dict):
    """`key(device ID)`: the signing key of a trusted member of `circle`, else None."""
    def key(device):
        member = circle["members"].get(device)
        return member["keys"]["signing"] if member and not member["revoked"] else None
    return key


def decode_response(data: bytes, signer_key) -> dict:
    """PAIRING.md "Pairing response": decodes strictly, then the responder
    must be trusted (`signer_key` answers None otherwise) and have signed it."""
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_PAIRING_RESPONSE)
    response = {"account": r.account(), "requestHash": r.bytes(32, "a request hash"), "responder": r.string(),
                "share": read_share(r), "genesisHash": r.bytes(32, "a genesis hash"),
                "headHash": r.bytes(32, "a head hash"), "headSeq": r.u64(),
                "confirmation": r.bytes(TAG_BYTES_V2, "a confirmation")}
    r.finish()
    key = signer_key(response["responder"])
    if key is None:
        raise Rejected("untrustedSigner", response["responder"])
    if not ed25519_verify(key, signature, signed):
        raise Rejected("badSignature", "a pairing response")
    response["hash"] = labeled_hash(LABEL_PAIRING_RESPONSE, [data])
    response["ADb"] = responder_ad(response["responder"], response["genesisHash"], response["headHash"], response["headSeq"])
    return response


def take_response(circle: dict, data: bytes, request: dict, ya: bytes) -> dict:
    """The new device takes a response to its request (PAIRING.md, "New
    device", step 3): the response rules, then K = scalar_mult_vfy(ya, Yb),
    ISK and Tb (`confirmationFailed`), then the genesis hash against entry 0
    of its own verified log (`invalid`). Answers the exchange's keys."""
    response = decode_response(data, trusted_signing_key(circle))
    if response["account"] != circle["account"]:
        raise Rejected("invalid", "a response for another account")
    if response["requestHash"] != request["hash"]:
        raise Rejected("ignored", "a response to another request")
    ada = initiator_ad(request["deviceID"])
    keys = confirmation_keys(request["session"], cpace_ref.shared_secret(ya, response["share"]),
                             request["share"], ada, response["share"], response["ADb"])
    if not hmac.compare_digest(keys["Tb"], response["confirmation"]):
        raise Rejected("confirmationFailed", "Tb does not verify: another code, channel, session or circle")
    if response["genesisHash"] != circle["hashes"][0]:
        raise Rejected("invalid", "the response's genesis is not the genesis this device verified")
    keys.update(response=response, ADa=ada)
    return keys


def confirmation_signed(account, request_hash: bytes, response_hash: bytes, ta: bytes) -> bytes:
    return Writer().string(LABEL_PAIRING_CONFIRM).string(account).bytes(request_hash).bytes(response_hash).bytes(ta).out


def decode_confirmation(data: bytes, request: dict) -> dict:
    """PAIRING.md "Pairing confirmation": Ta is 64 bytes or empty; signed by
    the key of the request it names (`request`, the one the receiver keeps)."""
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_PAIRING_CONFIRM)
    confirmation = {"account": r.account(), "requestHash": r.bytes(32, "a request hash"),
                    "responseHash": r.bytes(32, "a response hash"), "confirmation": r.bytes()}
    r.finish()
    if len(confirmation["confirmation"]) not in (0, TAG_BYTES_V2):
        raise Rejected("malformed", "a confirmation must be 64 bytes or empty")
    if confirmation["requestHash"] != request["hash"]:
        raise Rejected("ignored", "a confirmation for a request this device does not keep")
    if not ed25519_verify(request["device"]["signing"], signature, signed):
        raise Rejected("badSignature", "a pairing confirmation")
    return confirmation


def take_confirmation(data: bytes, request: dict, response_hash: bytes, keys: dict) -> str:
    """The trusted device, waiting on the response it published (hash
    `response_hash`, exchange `keys`): an empty confirmation or a Ta that does
    not verify is `confirmationFailed` (the person is told `denied`)."""
    confirmation = decode_confirmation(data, request)
    if confirmation["account"] != request["account"]:
        raise Rejected("invalid", "a confirmation for another account")
    if confirmation["responseHash"] != response_hash:
        raise Rejected("ignored", "a confirmation of another response")
    if not hmac.compare_digest(keys["Ta"], confirmation["confirmation"]):
        raise Rejected("confirmationFailed", "an empty confirmation, or a Ta that does not verify")
    return "accepted"


def approval_key(isk: bytes) -> bytes:
    """The approval tag's key: SHA-512 over labelled fields, a key no one
    without ISK (so without the code and ya or yb) can have."""
    return hashlib.sha512(Writer().string(LABEL_PAIRING_APPROVAL_KEY).bytes(isk).out).digest()


def approval_tag(isk: bytes, account, request_hash: bytes, entry_hash: bytes, genesis_hash: bytes) -> bytes:
    """Authenticates, under ISK, that the approve entry `entry_hash` answers
    this request in the chain that starts at `genesis_hash`."""
    message = Writer().string(LABEL_PAIRING_APPROVAL).string(account).bytes(request_hash).bytes(entry_hash) \
        .bytes(genesis_hash).out
    return hmac.new(approval_key(isk), message, hashlib.sha512).digest()


def approval_signed(account, request_hash: bytes, approver: str, entry_hash: bytes, tag: bytes) -> bytes:
    return Writer().string(LABEL_PAIRING_APPROVAL).string(account).bytes(request_hash).string(approver) \
        .bytes(entry_hash).bytes(tag).out


def decode_approval(data: bytes, signer_key) -> dict:
    """PAIRING.md "Pairing approval": strict decoding, a trusted approver, its signature."""
    signed, signature = split_outer(data)
    r = Reader(signed)
    r.label(LABEL_PAIRING_APPROVAL)
    approval = {"account": r.account(), "requestHash": r.bytes(32, "a request hash"), "approver": r.string(),
                "entryHash": r.bytes(32, "an entry hash"), "tag": r.bytes(TAG_BYTES_V2, "a tag")}
    r.finish()
    key = signer_key(approval["approver"])
    if key is None:
        raise Rejected("untrustedSigner", approval["approver"])
    if not ed25519_verify(key, signature, signed):
        raise Rejected("badSignature", "a pairing approval")
    return approval


def take_approval(circle: dict, log: list, data: bytes, request: dict, isk: bytes) -> str:
    """The new device (verified log `log`, circle `circle`, its request and
    ISK): the approval must name an approve entry of its log for its own keys
    and request hash, signed by the approver, and its tag must verify under
    ISK with the genesis of its log; otherwise `invalid`."""
    approval = decode_approval(data, trusted_signing_key(circle))
    if approval["account"] != circle["account"]:
        raise Rejected("invalid", "an approval for another account")
    if approval["requestHash"] != request["hash"]:
        raise Rejected("ignored", "an approval of another request")
    entry = next((e for e in map(decode_log_entry, log) if e["hash"] == approval["entryHash"]), None)
    if entry is None or entry["kind"] != "approve" or entry["signer"] != approval["approver"] \
            or entry["body"]["device"] != request["device"] or entry["body"]["requestHash"] != request["hash"]:
        raise Rejected("invalid", "the approval does not name an approve entry of this request, by its approver")
    expected = approval_tag(isk, circle["account"], request["hash"], approval["entryHash"], circle["hashes"][0])
    if not hmac.compare_digest(expected, approval["tag"]):
        raise Rejected("invalid", "the approval tag does not verify under ISK")
    return "accepted"


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
    pairing = pairing_vectors(dict(locals()))

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
        "pairing": pairing,
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
    # PROTOCOL.md "Recovery": a kit's member (Ed25519 seed 05 x 32, X25519 secret 06 x 32), added by A, re-joins
    # the account from a new device C (seed 07 x 32, X25519 secret 08 x 32) by an approve naming no request.
    sign_pk_k, sk_k = ed25519_keypair(b"\x05" * 32)
    device_k = {"signing": sign_pk_k, "box": x25519_public_key(b"\x06" * 32), "name": "recovery kit"}
    id_k = device_id(device_k["signing"], device_k["box"])
    sign_pk_c, _ = ed25519_keypair(b"\x07" * 32)
    device_c = {"signing": sign_pk_c, "box": x25519_public_key(b"\x08" * 32), "name": "restored"}
    recovery = entry(2, entry_hash(approve), id_a, sk_a, "recovery", {"device": device_k})
    rejoin = entry(3, entry_hash(recovery), id_k, sk_k, "approve", {"device": device_c, "requestHash": ZERO_HASH})
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
        ("announce skipping past the next generation", "log", [genesis, approve],
         entry(2, entry_hash(approve), id_b, sk_b, "announce", {"generation": 2**31 - 1, "keyID": key_id(other_key), "keyCreatedAt": t}), "invalid"),
        ("entry created past the year 9999", "log", [genesis],
         entry(1, genesis_hash, id_a, sk_a, "approve", {"device": device_b, "requestHash": v["request_hash"]}, MAX_MILLIS + 1), "malformed"),
        ("recovery kit's member added", "log", [genesis, approve], recovery, "accepted"),
        ("recovery kit's member approves a new device", "log", [genesis, approve, recovery], rejoin, "accepted"),
        ("recovery kit's member announces", "log", [genesis, approve, recovery],
         entry(3, entry_hash(recovery), id_k, sk_k, "announce", {"generation": 2, "keyID": key_id(other_key), "keyCreatedAt": t}), "invalid"),
        ("recovery kit's member revokes a device", "log", [genesis, approve, recovery],
         entry(3, entry_hash(recovery), id_k, sk_k, "revoke", {"deviceID": id_b}), "invalid"),
        ("recovery kit's member added by a device not in the circle", "log", [genesis],
         entry(1, genesis_hash, id_b, sk_b, "recovery", {"device": device_k}), "untrustedSigner"),
        ("share from a recovery kit's member", "share", [genesis, approve, recovery], share(sender=id_k, sender_sk=sk_k), "untrustedSigner"),
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
    def receive(record, circle, log, data):
        if record == "log":
            return outcome_of(lambda: apply(circle, data))
        if record == "request":
            return outcome_of(lambda: decode_request(data) and "accepted")
        if record == "challenge":
            return outcome_of(lambda: take_challenge(circle, data))
        if record == "reveal":
            return outcome_of(lambda: decode_reveal(data, decode_request(v["request"])) and "accepted")
        sealed = box_seal(data, v["box_pk_b"])
        return outcome_of(lambda: take_share(circle, sealed, id_b, v["box_pk_b"], v["box_secret_b"]))

    return run_cases(account, cases, receive, data_key=lambda record: "sharePlaintextHex" if record == "share" else "hex")


def run_cases(account, cases, receive, data_key=lambda record: "hex") -> list:
    """Each case's log applied to a fresh circle, then its record received as
    `receive` says; the outcome must be the expected one (one outcome each)."""
    out = []
    for name, record, log, data, expect in cases:
        circle = new_circle(account)
        for earlier in log:
            if apply(circle, earlier) != "accepted":
                raise VectorError(f"case '{name}': its log does not apply")
        got = receive(record, circle, log, data)
        if got != expect:
            raise VectorError(f"case '{name}': expected {expect}, got {got}")
        case = {"name": name, "record": record, "log": [e.hex() for e in log]}
        case[data_key(record)] = data.hex()
        case["expect"] = expect
        out.append(case)
    return out


def pairing_vectors(v: dict) -> dict:
    """docs/PAIRING.md, "Vectors": B (the new device, CPace's initiator) asks
    to join alice's circle, whose only member is A (its founder, the
    responder, verified log = [genesis]); then one run of the exchange and
    the records it yields, the code-drawing rule, and `cases`."""
    account, genesis, genesis_hash = v["account"], v["genesis"], v["genesis_hash"]
    device_a, device_b, id_a, id_b = v["device_a"], v["device_b"], v["id_a"], v["id_b"]
    sk_a, sk_b = v["sign_sk_a"], v["sign_sk_b"]
    code, wrong_code = "042917", "042918"
    code_draw = bytes.fromhex("0000a7a5")         # 42917: the draw that gives `code`
    session = b"\x23" * SESSION_BYTES
    other_session = b"\x24" * SESSION_BYTES
    # Scalars as sample_scalar draws them: little-endian, bits 252 and up clear (so below L).
    ya = b"\x21" * 31 + b"\x01"
    yb = b"\x22" * 31 + b"\x02"
    requested_at, approve_at = v["request_at"], v["approve_at"]
    # C: a third device, whose keys stand in for B's in the substituted-keys case.
    seed_c, box_secret_c = b"\x05" * 32, b"\x06" * 32
    sign_pk_c, sign_sk_c = ed25519_keypair(seed_c)
    device_c = {"signing": sign_pk_c, "box": x25519_public_key(box_secret_c), "name": "tablet"}
    id_c = device_id(device_c["signing"], device_c["box"])
    assert draw_code(code_draw) == code
    prs = code.encode("ascii")

    # B: the CPace inputs of its request, its share, its signed request.
    ci = pairing_channel(account, device_b["signing"], device_b["box"])
    ada = initiator_ad(id_b)
    b_half = initiator_share(prs, ci, session, ya)
    req_signed = request_v2_signed(account, device_b, session, b_half["Ya"], genesis_hash, requested_at)
    request = outer(req_signed, ed25519_sign(sk_b, req_signed))
    request_hash = labeled_hash(LABEL_V2_REQUEST_HASH, [request])

    # A: takes the request, runs its half from the typed code with its log's genesis and head in ADb.
    circle_a = new_circle(account)
    apply(circle_a, genesis)
    take_request_v2(circle_a, request)
    rq = decode_request_v2(request)
    adb = responder_ad(id_a, genesis_hash, head(circle_a), len(circle_a["hashes"]) - 1)
    a_half = responder_half(prs, pairing_channel(account, rq["device"]["signing"], rq["device"]["box"]),
                            rq["session"], rq["share"], initiator_ad(rq["deviceID"]), adb, yb)

    def response(share=a_half["Yb"], tb=a_half["Tb"], genesis_field=genesis_hash, head_field=genesis_hash,
                 head_seq=0, responder=id_a, signer_sk=sk_a, request_field=request_hash):
        signed = response_signed(account, request_field, responder, share, genesis_field, head_field, head_seq, tb)
        return signed, outer(signed, ed25519_sign(signer_sk, signed))

    resp_signed, resp = response()
    response_hash = labeled_hash(LABEL_PAIRING_RESPONSE, [resp])

    # B: takes the response (Tb, genesis), answers with Ta.
    circle_b = new_circle(account)
    apply(circle_b, genesis)
    b_keys = take_response(circle_b, resp, rq, ya)

    def confirmation(ta, signer_sk=sk_b):
        signed = confirmation_signed(account, request_hash, response_hash, ta)
        return signed, outer(signed, ed25519_sign(signer_sk, signed))

    conf_signed, conf = confirmation(b_keys["Ta"])

    # A: Ta verifies, so it approves B at its head and publishes the pairing approval with the entry.
    assert take_confirmation(conf, rq, response_hash, a_half) == "accepted"
    approve_signed = log_entry_signed(account, 1, genesis_hash, id_a, approve_at, "approve",
                                      {"device": device_b, "requestHash": request_hash})
    approve = outer(approve_signed, ed25519_sign(sk_a, approve_signed))
    approve_hash = decode_log_entry(approve)["hash"]
    tag = approval_tag(a_half["ISK"], account, request_hash, approve_hash, genesis_hash)

    def approval(isk=a_half["ISK"]):
        t = approval_tag(isk, account, request_hash, approve_hash, genesis_hash)
        signed = approval_signed(account, request_hash, id_a, approve_hash, t)
        return signed, outer(signed, ed25519_sign(sk_a, signed))

    appr_signed, appr = approval()

    # --- self-checks: both halves agree, and agree with cpace_ref's own whole run ---
    run = cpace_ref.run_exchange(prs, ci, session, ya, ada, yb, adb)
    assert (run["g"], run["Ya"], run["Yb"], run["K"]) == (b_half["g"], b_half["Ya"], a_half["Yb"], a_half["K"])
    assert b_keys["K"] == a_half["K"] and b_keys["ISK"] == a_half["ISK"] == run["ISK_IR"]
    assert b_keys["macKey"] == a_half["macKey"] == run["mac_key_IR"]
    assert b_keys["Ta"] == a_half["Ta"] == run["Ta_IR"] and b_keys["Tb"] == a_half["Tb"] == run["Tb_IR"]
    assert a_half["g"] == b_half["g"] and b_keys["ADa"] == ada and b_keys["response"]["ADb"] == adb
    assert rq["hash"] == request_hash and rq["device"] == device_b and rq["headHash"] == genesis_hash
    assert split_outer(request)[0] == req_signed and split_outer(resp)[0] == resp_signed
    assert apply(circle_b, approve) == "accepted"
    assert take_approval(circle_b, [genesis, approve], appr, rq, b_keys["ISK"]) == "accepted"
    assert decode_approval(appr, trusted_signing_key(circle_b))["tag"] == tag

    cases = pairing_cases(locals())

    draws = []
    for random4 in ("00000000", "0000a7a5", "fff0bdbf", "fff13d7f", "fff13d80", "fff2d67f", "ffffffff"):
        drawn = draw_code(bytes.fromhex(random4))
        draws.append({"randomHex": random4, "n": int(random4, 16), "result": drawn or "rejected"})

    def signature_of(data):
        return split_outer(data)[1].hex()

    return {
        "inputs": {
            "account": account,
            "newDevice": {"name": device_b["name"], "ed25519SeedHex": v["seed_b"].hex(), "x25519SecretHex": v["box_secret_b"].hex()},
            "responder": {"name": device_a["name"], "ed25519SeedHex": v["seed_a"].hex(), "x25519SecretHex": v["box_secret_a"].hex()},
            "otherDevice": {"name": device_c["name"], "ed25519SeedHex": seed_c.hex(), "x25519SecretHex": box_secret_c.hex()},
            "code": code,
            "codeRandomHex": code_draw.hex(),
            "wrongCode": wrong_code,
            "sessionHex": session.hex(),
            "otherSessionHex": other_session.hex(),
            "yaScalarHex": ya.hex(),
            "ybScalarHex": yb.hex(),
            "requestedAtMs": requested_at,
            "approveCreatedAtMs": approve_at,
        },
        "deviceIdNew": id_b,
        "deviceIdResponder": id_a,
        "deviceIdOther": id_c,
        "genesisHex": genesis.hex(),
        "genesisHash": genesis_hash.hex(),
        "prsHex": prs.hex(),
        "ciHex": ci.hex(),
        "sidHex": session.hex(),
        "adaHex": ada.hex(),
        "adbHex": adb.hex(),
        "generatorHex": b_half["g"].hex(),
        "yaHex": b_half["Ya"].hex(),
        "ybHex": a_half["Yb"].hex(),
        "kHex": a_half["K"].hex(),
        "iskHex": a_half["ISK"].hex(),
        "macKeyHex": a_half["macKey"].hex(),
        "taHex": a_half["Ta"].hex(),
        "tbHex": a_half["Tb"].hex(),
        "requestSignedHex": req_signed.hex(),
        "requestSignature": signature_of(request),
        "requestHex": request.hex(),
        "requestHash": request_hash.hex(),
        "responseSignedHex": resp_signed.hex(),
        "responseSignature": signature_of(resp),
        "responseHex": resp.hex(),
        "responseHash": response_hash.hex(),
        "confirmationSignedHex": conf_signed.hex(),
        "confirmationSignature": signature_of(conf),
        "confirmationHex": conf.hex(),
        "approveSignedHex": approve_signed.hex(),
        "approveSignature": signature_of(approve),
        "approveHex": approve.hex(),
        "approveHash": approve_hash.hex(),
        "approvalKeyHex": approval_key(a_half["ISK"]).hex(),
        "approvalTagHex": tag.hex(),
        "approvalSignedHex": appr_signed.hex(),
        "approvalSignature": signature_of(appr),
        "approvalHex": appr.hex(),
        "codeDraws": draws,
        "cases": cases,
    }


def pairing_cases(p: dict) -> list:
    """One outcome each, like `cases` (PAIRING.md, "Vectors"). Every case has
    `log`, the entries of the receiver's verified log, and `hex`, the record:
      pairingRequest       any receiver decodes it and checks its account;
      pairingResponse      B takes it as a response to its request
                           (`requestHex`), holding `yaScalarHex`;
      pairingConfirmation  A takes it as the confirmation of its response
                           (`responseHex`), holding `ybScalarHex` and `code`;
      pairingApproval      B takes it with `iskHex`, its log holding the approve entry.
    Each wrong response is signed by A and names B's request, so that it
    reaches the check it is there for."""
    account, request, rq, genesis, approve = p["account"], p["request"], p["rq"], p["genesis"], p["approve"]
    response, confirmation, approval, prs = p["response"], p["confirmation"], p["approval"], p["prs"]
    ya, yb, session, ada, adb, sk_b = p["ya"], p["yb"], p["session"], p["ada"], p["adb"], p["v"]["sign_sk_b"]
    device_b, device_c, genesis_hash = p["device_b"], p["device_c"], p["genesis_hash"]
    ci = p["ci"]

    def request_with(share=rq["share"], label=LABEL_V2_ENROLL_REQUEST, request_account=account):
        w = Writer().string(label).string(request_account)
        write_device(w, device_b)
        signed = w.bytes(session).bytes(share).bytes(genesis_hash).u64(p["requested_at"]).out
        return outer(signed, ed25519_sign(sk_b, signed))

    non_canonical = (cpace_ref.P + 2).to_bytes(32, "little")   # s >= p: not a canonical encoding

    # (a) A typed another code: its g, and so Yb, K, ISK and Tb, are another exchange's.
    wrong = responder_half(p["wrong_code"].encode("ascii"), ci, session, rq["share"], ada, adb, yb)
    # (b) A ran the exchange with C's keys in CI (everything else B's): another g, another ISK.
    substituted = responder_half(prs, pairing_channel(account, device_c["signing"], device_c["box"]),
                                 session, rq["share"], ada, adb, yb)
    # (c) Yb and Tb of an exchange of another request of B's (same keys, code, ya and yb, another session).
    other_ya_share = initiator_share(prs, ci, p["other_session"], ya)["Ya"]
    replayed = responder_half(prs, ci, p["other_session"], other_ya_share, ada, adb, yb)
    # (d) A's response claims another circle: genesis (and head) of another genesis entry; Tb is right for that ADb.
    # The other genesis: A's, one millisecond later (the "second genesis" of `cases`).
    t = p["v"]["genesis_at"] + 1
    other_genesis_signed = log_entry_signed(account, 0, ZERO_HASH, p["id_a"], t, "genesis",
                                            {"device": p["device_a"], "generation": 1, "keyID": p["v"]["kid"], "keyCreatedAt": t})
    other_genesis_hash = labeled_hash(LABEL_LOG_HASH, [other_genesis_signed, ed25519_sign(p["sk_a"], other_genesis_signed)])
    other_adb = responder_ad(p["id_a"], other_genesis_hash, other_genesis_hash, 0)
    other_circle = responder_half(prs, ci, session, rq["share"], ada, other_adb, yb)
    # (e) an approval whose tag is keyed by the ISK of the wrong-code exchange.
    wrong_isk = wrong["ISK"]

    def bad_sig(data):
        out = bytearray(data)
        out[-1] ^= 0x01
        return bytes(out)

    cases = [
        ("pairing request", "pairingRequest", [genesis], request, "accepted"),
        ("version 1 request decoded as version 2", "pairingRequest", [genesis], p["v"]["request"], "malformed"),
        ("pairing request whose share is the identity", "pairingRequest", [genesis], request_with(share=cpace_ref.IDENTITY), "malformed"),
        ("pairing request whose share is not a canonical encoding", "pairingRequest", [genesis], request_with(share=non_canonical), "malformed"),
        ("pairing request with a flipped signature bit", "pairingRequest", [genesis], bad_sig(request), "badSignature"),
        ("pairing request for another account", "pairingRequest", [genesis], request_with(request_account="bob"), "invalid"),
        ("pairing response", "pairingResponse", [genesis], response()[1], "accepted"),
        ("pairing response from a responder that typed a wrong code", "pairingResponse", [genesis],
         response(share=wrong["Yb"], tb=wrong["Tb"])[1], "confirmationFailed"),
        ("pairing response computed with another device's keys in CI", "pairingResponse", [genesis],
         response(share=substituted["Yb"], tb=substituted["Tb"])[1], "confirmationFailed"),
        ("pairing response of another session, replayed for this request", "pairingResponse", [genesis],
         response(share=replayed["Yb"], tb=replayed["Tb"])[1], "confirmationFailed"),
        ("pairing response naming another genesis", "pairingResponse", [genesis],
         response(share=other_circle["Yb"], tb=other_circle["Tb"], genesis_field=other_genesis_hash,
                  head_field=other_genesis_hash)[1], "invalid"),
        ("pairing response whose share is the identity", "pairingResponse", [genesis],
         response(share=cpace_ref.IDENTITY)[1], "malformed"),
        ("pairing response from a device not in the circle", "pairingResponse", [genesis],
         response(responder=p["id_c"], signer_sk=p["sign_sk_c"])[1], "untrustedSigner"),
        ("pairing response with a flipped signature bit", "pairingResponse", [genesis], bad_sig(response()[1]), "badSignature"),
        ("pairing confirmation", "pairingConfirmation", [genesis], confirmation(p["b_keys"]["Ta"])[1], "accepted"),
        ("empty pairing confirmation", "pairingConfirmation", [genesis], confirmation(b"")[1], "confirmationFailed"),
        ("pairing confirmation whose Ta is another exchange's (a wrong code)", "pairingConfirmation", [genesis], confirmation(wrong["Ta"])[1],
         "confirmationFailed"),
        ("pairing confirmation with a 32-byte Ta", "pairingConfirmation", [genesis], confirmation(p["b_keys"]["Ta"][:32])[1],
         "malformed"),
        ("pairing confirmation signed by A", "pairingConfirmation", [genesis], confirmation(p["b_keys"]["Ta"], p["sk_a"])[1],
         "badSignature"),
        ("pairing approval", "pairingApproval", [genesis, approve], approval()[1], "accepted"),
        ("pairing approval tagged under another ISK", "pairingApproval", [genesis, approve], approval(wrong_isk)[1], "invalid"),
        ("pairing approval with a flipped signature bit", "pairingApproval", [genesis, approve], bad_sig(approval()[1]), "badSignature"),
    ]
    def receive(record, circle, log, data):
        if record == "pairingRequest":
            return outcome_of(lambda: take_request_v2(circle, data))
        if record == "pairingResponse":
            return outcome_of(lambda: take_response(circle, data, rq, ya) and "accepted")
        if record == "pairingConfirmation":
            return outcome_of(lambda: take_confirmation(data, rq, p["response_hash"], p["a_half"]))
        return outcome_of(lambda: take_approval(circle, log, data, rq, p["b_keys"]["ISK"]))

    return run_cases(account, cases, receive)


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
