"""The system libsodium through ctypes, and the byte helpers of the specs:
the one binding tools/recover-vault.py and tools/protocol-vectors.py share.
Python 3 standard library only."""

import ctypes

SIGNATURE_BYTES = 64
TAG_BYTES = 16


class SodiumError(Exception):
    pass


def _load():
    try:
        lib = ctypes.CDLL("libsodium.so.23")
    except OSError as error:
        raise SodiumError(f"cannot load libsodium.so.23 ({error}); install libsodium23") from error
    if lib.sodium_init() < 0:
        raise SodiumError("sodium_init failed")
    u8p = ctypes.c_char_p
    ull = ctypes.c_ulonglong
    lib.crypto_pwhash_alg_argon2id13.restype = ctypes.c_int
    lib.crypto_pwhash.argtypes = [u8p, ull, u8p, ull, u8p, ull, ctypes.c_size_t, ctypes.c_int]
    lib.crypto_pwhash.restype = ctypes.c_int
    lib.crypto_aead_xchacha20poly1305_ietf_decrypt.argtypes = [
        u8p, ctypes.POINTER(ull), ctypes.c_void_p, u8p, ull, u8p, ull, u8p, u8p]
    lib.crypto_aead_xchacha20poly1305_ietf_decrypt.restype = ctypes.c_int
    lib.crypto_aead_xchacha20poly1305_ietf_encrypt.argtypes = [
        u8p, ctypes.POINTER(ull), u8p, ull, u8p, ull, ctypes.c_void_p, u8p, u8p]
    lib.crypto_aead_xchacha20poly1305_ietf_encrypt.restype = ctypes.c_int
    lib.crypto_generichash.argtypes = [u8p, ctypes.c_size_t, u8p, ull, u8p, ctypes.c_size_t]
    lib.crypto_generichash.restype = ctypes.c_int
    lib.crypto_sign_seed_keypair.argtypes = [u8p, u8p, u8p]
    lib.crypto_sign_seed_keypair.restype = ctypes.c_int
    lib.crypto_sign_detached.argtypes = [u8p, ctypes.POINTER(ull), u8p, ull, u8p]
    lib.crypto_sign_detached.restype = ctypes.c_int
    lib.crypto_sign_verify_detached.argtypes = [u8p, u8p, ull, u8p]
    lib.crypto_sign_verify_detached.restype = ctypes.c_int
    lib.crypto_scalarmult_base.argtypes = [u8p, u8p]
    lib.crypto_scalarmult_base.restype = ctypes.c_int
    lib.crypto_box_seal.argtypes = [u8p, u8p, ull, u8p]
    lib.crypto_box_seal.restype = ctypes.c_int
    lib.crypto_box_seal_open.argtypes = [u8p, u8p, ull, u8p, u8p]
    lib.crypto_box_seal_open.restype = ctypes.c_int
    return lib


_SODIUM = None


def sodium():
    global _SODIUM
    if _SODIUM is None:
        _SODIUM = _load()
    return _SODIUM


def argon2id(passphrase: bytes, salt: bytes, ops: int, mem: int, size: int = 32) -> bytes:
    """Argon2id v1.3, parallelism 1."""
    lib = sodium()
    out = ctypes.create_string_buffer(size)
    if lib.crypto_pwhash(out, size, passphrase, len(passphrase), salt, ops, mem, lib.crypto_pwhash_alg_argon2id13()) != 0:
        raise SodiumError(f"Argon2id failed (ops {ops}, mem {mem} bytes): out of memory or invalid cost")
    return out.raw


def blake2b(data: bytes, size: int) -> bytes:
    out = ctypes.create_string_buffer(size)
    if sodium().crypto_generichash(out, size, data, len(data), None, 0) != 0:
        raise SodiumError("BLAKE2b failed")
    return out.raw


def xchacha_open(key: bytes, nonce: bytes, sealed: bytes, aad: bytes):
    """Returns the plaintext, or None when authentication fails."""
    out = ctypes.create_string_buffer(max(len(sealed) - TAG_BYTES, 1))
    written = ctypes.c_ulonglong(0)
    rc = sodium().crypto_aead_xchacha20poly1305_ietf_decrypt(
        out, ctypes.byref(written), None, sealed, len(sealed), aad, len(aad), nonce, key)
    if rc != 0:
        return None
    return out.raw[:written.value]


def xchacha_seal(key: bytes, nonce: bytes, plaintext: bytes, aad: bytes) -> bytes:
    out = ctypes.create_string_buffer(len(plaintext) + TAG_BYTES)
    written = ctypes.c_ulonglong(0)
    rc = sodium().crypto_aead_xchacha20poly1305_ietf_encrypt(
        out, ctypes.byref(written), plaintext, len(plaintext), aad, len(aad), None, nonce, key)
    if rc != 0:
        raise SodiumError("XChaCha20-Poly1305 encryption failed")
    return out.raw[:written.value]


def ed25519_keypair(seed: bytes):
    """Returns (public key, 64-byte libsodium secret key)."""
    pk = ctypes.create_string_buffer(32)
    sk = ctypes.create_string_buffer(64)
    if sodium().crypto_sign_seed_keypair(pk, sk, seed) != 0:
        raise SodiumError("Ed25519 key derivation failed")
    return pk.raw, sk.raw


def ed25519_sign(secret: bytes, message: bytes) -> bytes:
    sig = ctypes.create_string_buffer(SIGNATURE_BYTES)
    if sodium().crypto_sign_detached(sig, None, message, len(message), secret) != 0:
        raise SodiumError("Ed25519 signing failed")
    return sig.raw


def ed25519_verify(public: bytes, signature: bytes, message: bytes) -> bool:
    return len(signature) == SIGNATURE_BYTES and \
        sodium().crypto_sign_verify_detached(signature, message, len(message), public) == 0


def x25519_public_key(secret: bytes) -> bytes:
    pk = ctypes.create_string_buffer(32)
    if sodium().crypto_scalarmult_base(pk, secret) != 0:
        raise SodiumError("X25519 public key derivation failed")
    return pk.raw


def u32be(n: int) -> bytes:
    return n.to_bytes(4, "big")


def u64be(n: int) -> bytes:
    return n.to_bytes(8, "big")


def labeled(label: str, parts) -> bytes:
    """label || 0x00 || for each part: u32be(len) || part (the input of every labelled hash)."""
    out = label.encode("utf-8") + b"\x00"
    for part in parts:
        out += u32be(len(part)) + part
    return out
