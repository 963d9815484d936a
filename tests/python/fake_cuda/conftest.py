"""The fake CUDA driver (tests/fake_cuda) seen from Python through ctypes: the
same loaded instance handoff uses (the dynamic loader shares a library opened
by the same path), its driver entry points for a test that plays a CUDA
producer or consumer, and its control API (fake_cuda_control.h)."""
import contextlib
import ctypes
import os

import pytest

import handoff

CUDA_SUCCESS = 0


class FakeDriver:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        for name, args, res in [
            ("cuDeviceGet", [ctypes.POINTER(ctypes.c_int), ctypes.c_int], ctypes.c_int),
            ("cuDevicePrimaryCtxRetain", [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int], ctypes.c_int),
            ("cuDevicePrimaryCtxRelease_v2", [ctypes.c_int], ctypes.c_int),
            ("cuCtxPushCurrent_v2", [ctypes.c_void_p], ctypes.c_int),
            ("cuCtxPopCurrent_v2", [ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int),
            ("cuMemAlloc_v2", [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t], ctypes.c_int),
            ("cuMemFree_v2", [ctypes.c_uint64], ctypes.c_int),
            ("cuMemcpyHtoD_v2", [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t], ctypes.c_int),
            ("cuMemcpyDtoH_v2", [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t], ctypes.c_int),
            ("fake_cuda_reset", [], None),
            ("fake_cuda_set_uuid", [ctypes.c_char_p], ctypes.c_int),
            ("fake_cuda_hold", [ctypes.c_char_p, ctypes.c_int], None),
            ("fake_cuda_held_calls", [ctypes.c_char_p], ctypes.c_int),
            ("fake_cuda_primary_context_refs", [ctypes.c_int], ctypes.c_int),
            ("fake_cuda_context_resets", [ctypes.c_int], ctypes.c_int),
            ("fake_cuda_objects_lost_to_resets", [], ctypes.c_int),
            ("fake_cuda_call_count", [ctypes.c_char_p], ctypes.c_int),
            ("fake_cuda_host_copies", [], ctypes.c_int),
            ("fake_cuda_live_mappings", [], ctypes.c_int),
            ("fake_cuda_live_registrations", [], ctypes.c_int),
            ("fake_cuda_live_streams", [], ctypes.c_int),
            ("fake_cuda_live_allocations", [], ctypes.c_int),
        ]:
            fn = getattr(self.lib, name)
            fn.argtypes = args
            fn.restype = res

    @staticmethod
    def check(result, what):
        assert result == CUDA_SUCCESS, f"{what} returned CUresult {result}"

    def retain(self, ordinal=0):
        ctx = ctypes.c_void_p()
        self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), ordinal), "cuDevicePrimaryCtxRetain")
        return ctx.value

    def release(self, ordinal=0):
        self.check(self.lib.cuDevicePrimaryCtxRelease_v2(ordinal), "cuDevicePrimaryCtxRelease")

    @contextlib.contextmanager
    def current(self, ctx):
        self.check(self.lib.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
        try:
            yield
        finally:
            self.check(self.lib.cuCtxPopCurrent_v2(None), "cuCtxPopCurrent")

    def alloc(self, data: bytes):
        p = ctypes.c_uint64()
        self.check(self.lib.cuMemAlloc_v2(ctypes.byref(p), len(data)), "cuMemAlloc")
        self.check(self.lib.cuMemcpyHtoD_v2(p.value, data, len(data)), "cuMemcpyHtoD")
        return p.value

    def free(self, ptr):
        self.check(self.lib.cuMemFree_v2(ptr), "cuMemFree")

    def read(self, ptr, n):
        """cuMemcpyDtoH, as a consumer reads device memory; the CUresult and the bytes."""
        buf = ctypes.create_string_buffer(n)
        r = self.lib.cuMemcpyDtoH_v2(buf, ptr, n)
        return r, buf.raw

    def set_uuid(self, uuid):
        """Device 0's UUID from now on ('xxxxxxxx-xxxx-...', 32 hex digits); None: the
        environment's again (fake_cuda_set_uuid; reset also undoes it)."""
        self.check(self.lib.fake_cuda_set_uuid(uuid.encode() if uuid else None), f"fake_cuda_set_uuid({uuid!r})")

    def hold(self, entry, max_wait_ms):
        """Calls to `entry` wait until hold(entry, 0) or max_wait_ms."""
        self.lib.fake_cuda_hold(entry.encode(), max_wait_ms)

    def held_calls(self, entry):
        return self.lib.fake_cuda_held_calls(entry.encode())

    def primary_context_refs(self, ordinal=0):
        return self.lib.fake_cuda_primary_context_refs(ordinal)

    def context_resets(self, ordinal=0):
        return self.lib.fake_cuda_context_resets(ordinal)

    def call_count(self, entry):
        return self.lib.fake_cuda_call_count(entry.encode())

    def host_copies(self):
        """Copies from or to host memory since the last reset (fake_cuda_host_copies)."""
        return self.lib.fake_cuda_host_copies()

    def live(self):
        """Mappings, registrations, streams and allocations alive now."""
        return {n: getattr(self.lib, "fake_cuda_live_" + n)() for n in ("mappings", "registrations", "streams",
                                                                         "allocations")}

    def objects_lost_to_resets(self):
        return self.lib.fake_cuda_objects_lost_to_resets()


@pytest.fixture
def fake():
    path = os.environ.get("HANDOFF_CUDA_DRIVER")
    if not path:
        pytest.skip("HANDOFF_CUDA_DRIVER is not set (run through ctest -L fakecuda)")
    assert "unavailable" not in handoff.cuda_status()  # loads the driver (cuInit) first
    driver = FakeDriver(path)
    driver.lib.fake_cuda_reset()
    yield driver
    driver.lib.fake_cuda_reset()
