"""Try to take a private key out of a PKCS #11 token, as a user who holds the PIN would (stdlib only).

Copied into a container host and run there by the key-protection checks (checks/ihs/), as httpd's user::

    python3 token_export.py MODULE TOKEN_LABEL KEY_LABEL PIN_FILE

It logs in with the PIN from PIN_FILE, finds the private key labelled KEY_LABEL and prints one JSON
object: the key's protection attributes (CKA_SENSITIVE, CKA_EXTRACTABLE, CKA_ALWAYS_SENSITIVE,
CKA_NEVER_EXTRACTABLE, CKA_DECRYPT, CKA_UNWRAP, CKA_SIGN), the return values of three attempts, and,
when the wrap worked, what is needed to unwrap it outside the token:

- ``read``: C_GetAttributeValue of CKA_PRIVATE_EXPONENT and of CKA_VALUE (a sensitive key refuses both
  with CKR_ATTRIBUTE_SENSITIVE);
- ``wrap``: a session AES-256 key made in the same session (not sensitive, extractable: its value is
  readable), then C_WrapKey of the private key with CKM_AES_CBC_PAD (a non-extractable key refuses with
  CKR_KEY_UNEXTRACTABLE); on success ``aes_key``, ``iv`` and ``wrapped`` (hex), which ``openssl enc -d
  -aes-256-cbc`` turns back into the PKCS #8 private key;
- ``set_extractable``: C_SetAttributeValue(CKA_EXTRACTABLE = true) on the private key (PKCS #11 lets
  CKA_EXTRACTABLE go from true to false only).

The token is only read: the AES key is a session object and disappears with the session. Names and
values of the constants are PKCS #11 v2.40's (pkcs11t.h). The ``rv`` values are printed by name.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

CK_ULONG = ctypes.c_ulong
CK_BBOOL = ctypes.c_ubyte

CKA = {"CLASS": 0x0, "TOKEN": 0x1, "PRIVATE": 0x2, "LABEL": 0x3, "VALUE": 0x11, "KEY_TYPE": 0x100,
       "SENSITIVE": 0x103, "ENCRYPT": 0x104, "DECRYPT": 0x105, "WRAP": 0x106, "UNWRAP": 0x107, "SIGN": 0x108,
       "PRIVATE_EXPONENT": 0x123, "VALUE_LEN": 0x161, "EXTRACTABLE": 0x162, "NEVER_EXTRACTABLE": 0x164,
       "ALWAYS_SENSITIVE": 0x165}
CKO_PRIVATE_KEY, CKO_SECRET_KEY = 3, 4
CKK_AES = 0x1F
CKM_AES_KEY_GEN, CKM_AES_CBC_PAD = 0x1080, 0x1085
CKF_RW_SESSION, CKF_SERIAL_SESSION = 0x2, 0x4
CKU_USER = 1
RV = {0x0: "CKR_OK", 0x5: "CKR_GENERAL_ERROR", 0x6: "CKR_FUNCTION_FAILED", 0x10: "CKR_ATTRIBUTE_READ_ONLY",
      0x11: "CKR_ATTRIBUTE_SENSITIVE", 0x12: "CKR_ATTRIBUTE_TYPE_INVALID", 0x13: "CKR_ATTRIBUTE_VALUE_INVALID",
      0x60: "CKR_KEY_HANDLE_INVALID", 0x63: "CKR_KEY_TYPE_INCONSISTENT", 0x68: "CKR_KEY_FUNCTION_NOT_PERMITTED",
      0x69: "CKR_KEY_NOT_WRAPPABLE", 0x6A: "CKR_KEY_UNEXTRACTABLE", 0x70: "CKR_MECHANISM_INVALID",
      0xD1: "CKR_TEMPLATE_INCONSISTENT", 0x101: "CKR_USER_NOT_LOGGED_IN", 0xA0: "CKR_PIN_INCORRECT"}
PROTECTION = ("SENSITIVE", "EXTRACTABLE", "ALWAYS_SENSITIVE", "NEVER_EXTRACTABLE", "DECRYPT", "UNWRAP", "SIGN")


class Attribute(ctypes.Structure):
    _fields_ = [("type", CK_ULONG), ("pValue", ctypes.c_void_p), ("ulValueLen", CK_ULONG)]


class Mechanism(ctypes.Structure):
    _fields_ = [("mechanism", CK_ULONG), ("pParameter", ctypes.c_void_p), ("ulParameterLen", CK_ULONG)]


def name(rv: int) -> str:
    return RV.get(rv, f"0x{rv:X}")


class Token:
    def __init__(self, module: str):
        self.lib = ctypes.CDLL(module)
        self.keep: list = []  # buffers that must outlive a call's template

    def call(self, fn: str, *args) -> int:
        f = getattr(self.lib, fn)
        f.restype = CK_ULONG  # CK_RV
        return f(*args)

    def must(self, fn: str, *args) -> None:
        rv = self.call(fn, *args)
        if rv != 0:
            raise SystemExit(f"{fn} failed: {name(rv)}")

    def template(self, items: list[tuple[str, object]]):
        arr = (Attribute * len(items))()
        for i, (attr, value) in enumerate(items):
            if isinstance(value, bool):
                buf = CK_BBOOL(1 if value else 0)
            elif isinstance(value, int):
                buf = CK_ULONG(value)
            else:
                buf = ctypes.create_string_buffer(value, len(value))
            self.keep.append(buf)
            arr[i] = Attribute(CKA[attr], ctypes.cast(ctypes.byref(buf), ctypes.c_void_p), ctypes.sizeof(buf))
        return arr, CK_ULONG(len(items))

    def slot_of(self, label: str) -> int:
        count = CK_ULONG(0)
        self.must("C_GetSlotList", CK_BBOOL(1), None, ctypes.byref(count))
        slots = (CK_ULONG * count.value)()
        self.must("C_GetSlotList", CK_BBOOL(1), slots, ctypes.byref(count))
        for slot in slots:
            info = ctypes.create_string_buffer(1024)  # CK_TOKEN_INFO starts with its 32-byte blank-padded label
            if self.call("C_GetTokenInfo", CK_ULONG(slot), info) == 0 and info.raw[:32].decode().rstrip() == label:
                return slot
        raise SystemExit(f"no token labelled {label}")

    def find(self, session, items) -> int:
        tmpl, n = self.template(items)
        self.must("C_FindObjectsInit", session, tmpl, n)
        handle, found = CK_ULONG(0), CK_ULONG(0)
        self.must("C_FindObjects", session, ctypes.byref(handle), CK_ULONG(1), ctypes.byref(found))
        self.must("C_FindObjectsFinal", session)
        if not found.value:
            raise SystemExit("no private key with that label in the token")
        return handle.value

    def get(self, session, handle: int, attr: str) -> tuple[int, bytes | None]:
        probe = Attribute(CKA[attr], None, 0)
        rv = self.call("C_GetAttributeValue", session, CK_ULONG(handle), ctypes.byref(probe), CK_ULONG(1))
        if rv != 0:
            return rv, None
        buf = ctypes.create_string_buffer(probe.ulValueLen)
        full = Attribute(CKA[attr], ctypes.cast(buf, ctypes.c_void_p), probe.ulValueLen)
        rv = self.call("C_GetAttributeValue", session, CK_ULONG(handle), ctypes.byref(full), CK_ULONG(1))
        return rv, buf.raw[:full.ulValueLen] if rv == 0 else None


def main(module: str, token_label: str, key_label: str, pin_file: str) -> dict:
    with open(pin_file, "rb") as f:
        pin = f.read().strip()
    t = Token(module)
    t.must("C_Initialize", None)
    session = CK_ULONG(0)
    t.must("C_OpenSession", CK_ULONG(t.slot_of(token_label)), CK_ULONG(CKF_SERIAL_SESSION | CKF_RW_SESSION),
           None, None, ctypes.byref(session))
    t.must("C_Login", session, CK_ULONG(CKU_USER), ctypes.c_char_p(pin), CK_ULONG(len(pin)))
    key = t.find(session, [("CLASS", CKO_PRIVATE_KEY), ("LABEL", key_label.encode())])
    out: dict = {"attributes": {}}
    for attr in PROTECTION:
        rv, value = t.get(session, key, attr)
        out["attributes"][attr] = bool(value[0]) if rv == 0 and value else name(rv)
    out["read"] = {attr: name(t.get(session, key, attr)[0]) for attr in ("PRIVATE_EXPONENT", "VALUE")}

    # the session AES key: readable by whoever made it, so whatever it wraps can be unwrapped outside
    gen = Mechanism(CKM_AES_KEY_GEN, None, 0)
    tmpl, n = t.template([("CLASS", CKO_SECRET_KEY), ("KEY_TYPE", CKK_AES), ("TOKEN", False), ("VALUE_LEN", 32),
                          ("SENSITIVE", False), ("EXTRACTABLE", True), ("WRAP", True), ("ENCRYPT", True)])
    aes = CK_ULONG(0)
    t.must("C_GenerateKey", session, ctypes.byref(gen), tmpl, n, ctypes.byref(aes))
    iv = os.urandom(16)
    iv_buf = ctypes.create_string_buffer(iv, 16)
    wrap = Mechanism(CKM_AES_CBC_PAD, ctypes.cast(iv_buf, ctypes.c_void_p), 16)
    size = CK_ULONG(0)
    rv = t.call("C_WrapKey", session, ctypes.byref(wrap), aes, CK_ULONG(key), None, ctypes.byref(size))
    if rv == 0:
        blob = ctypes.create_string_buffer(size.value)
        rv = t.call("C_WrapKey", session, ctypes.byref(wrap), aes, CK_ULONG(key), blob, ctypes.byref(size))
    out["wrap"] = name(rv)
    if rv == 0:
        out["aes_key"] = t.get(session, aes.value, "VALUE")[1].hex()
        out["iv"] = iv.hex()
        out["wrapped"] = blob.raw[:size.value].hex()

    tmpl, n = t.template([("EXTRACTABLE", True)])
    out["set_extractable"] = name(t.call("C_SetAttributeValue", session, CK_ULONG(key), tmpl, n))
    t.call("C_Logout", session)
    t.call("C_CloseSession", session)
    t.call("C_Finalize", None)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 5:
        raise SystemExit("usage: token_export.py MODULE TOKEN_LABEL KEY_LABEL PIN_FILE")
    print(json.dumps(main(*sys.argv[1:])))
