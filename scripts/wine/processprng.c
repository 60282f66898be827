/* A stand-in for Windows' bcryptprimitives.dll, for Wine 8.0 (Debian 12's), which lacks it.
 *
 * Rust's standard library (1.78 and newer) imports ProcessPrng from bcryptprimitives.dll for
 * its random numbers (HashMap seeds), so without this DLL every Rust program stops at load
 * under that Wine with c0000135 (STATUS_DLL_NOT_FOUND). scripts/windows.sh builds it with
 * mingw into the Wine prefix it creates; real Windows (10 and newer) has the DLL itself.
 *
 * ProcessPrng fills the buffer from RtlGenRandom (advapi32's SystemFunction036), Wine's
 * cryptographic random source. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
