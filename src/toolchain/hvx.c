/* The prelude of every HVX program isadb builds: qemu-hexagon runs it without a libc, so it
   supplies _start, emit and read_in (write and read syscalls), the memory routines clang may
   call, and the integer-division helpers. Scalar float division and libm are not provided. */
#include <stdint.h>
#include <stddef.h>
#include <hexagon_types.h>
#include <hexagon_protos.h>
#include <hvx_hexagon_protos.h>

/* ---- freestanding runtime for qemu-hexagon (no libc) ---- */
static long isadb_syscall3(long nr, long a, long b, long c) {
  register long r0 __asm__("r0") = a;
  register long r1 __asm__("r1") = b;
  register long r2 __asm__("r2") = c;
  register long r6 __asm__("r6") = nr;
  __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}

/* Writes n bytes at p to stdout via the write syscall (64), retrying partial writes. */
static void emit(const void *p, unsigned long n) {
  const char *c = (const char *)p;
  while (n > 0) {
    long w = isadb_syscall3(64, 1, (long)c, (long)n);
    if (w <= 0) break;
    c += w;
    n -= (unsigned long)w;
  }
}

/* Reads up to n bytes from stdin into p via the read syscall (63), retrying short reads; returns the count read. */
static unsigned long read_in(void *p, unsigned long n) {
  char *c = (char *)p;
  unsigned long got = 0;
  while (got < n) {
    long r = isadb_syscall3(63, 0, (long)(c + got), (long)(n - got));
    if (r <= 0) break;
    got += (unsigned long)r;
  }
  return got;
}

int harness_main(void);
void isadb_start_c(void) __attribute__((noreturn, used));
void isadb_start_c(void) {
  int rc = harness_main();
  for (;;) isadb_syscall3(93, rc, 0, 0); /* exit */
}
/* Entry point: align sp to 256 (HVX vector pairs), clear fp/lr so the frame chain ends, call into C. */
__asm__(".text\n.globl _start\n.type _start,@function\n.p2align 4\n_start:\n"
        "  r29 = and(r29, #-256)\n  r30 = #0\n  r31 = #0\n  call isadb_start_c\n"
        ".size _start, .-_start\n");

/* Library routines clang may emit calls to (aggregate copies, divisions). */
__attribute__((weak)) void *memcpy(void *d, const void *s, size_t n) {
  unsigned char *dp = (unsigned char *)d; const unsigned char *sp = (const unsigned char *)s;
  while (n--) *dp++ = *sp++;
  return d;
}
__attribute__((weak)) void *memmove(void *d, const void *s, size_t n) {
  unsigned char *dp = (unsigned char *)d; const unsigned char *sp = (const unsigned char *)s;
  if (dp < sp) { while (n--) *dp++ = *sp++; }
  else { dp += n; sp += n; while (n--) *--dp = *--sp; }
  return d;
}
__attribute__((weak)) void *memset(void *d, int c, size_t n) {
  unsigned char *dp = (unsigned char *)d;
  while (n--) *dp++ = (unsigned char)c;
  return d;
}
__attribute__((weak)) int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (; n; n--, x++, y++) if (*x != *y) return *x < *y ? -1 : 1;
  return 0;
}
__attribute__((weak)) void *__hexagon_memcpy_likely_aligned_min32bytes_mult8bytes(void *d, const void *s, size_t n) {
  return memcpy(d, s, n);
}
static unsigned long long isadb_udivmod64(unsigned long long n, unsigned long long d, unsigned long long *rem) {
  unsigned long long q = 0, r = 0;
  if (d == 0) { if (rem) *rem = n; return ~0ULL; }
  for (int i = 63; i >= 0; i--) {
    r = (r << 1) | ((n >> i) & 1);
    if (r >= d) { r -= d; q |= 1ULL << i; }
  }
  if (rem) *rem = r;
  return q;
}
__attribute__((weak)) unsigned long long __hexagon_udivdi3(unsigned long long a, unsigned long long b) { return isadb_udivmod64(a, b, 0); }
__attribute__((weak)) unsigned long long __hexagon_umoddi3(unsigned long long a, unsigned long long b) { unsigned long long r; isadb_udivmod64(a, b, &r); return r; }
__attribute__((weak)) long long __hexagon_divdi3(long long a, long long b) {
  unsigned long long q = isadb_udivmod64(a < 0 ? -(unsigned long long)a : (unsigned long long)a, b < 0 ? -(unsigned long long)b : (unsigned long long)b, 0);
  return (long long)(((a < 0) != (b < 0)) ? -q : q);
}
__attribute__((weak)) long long __hexagon_moddi3(long long a, long long b) {
  unsigned long long r;
  isadb_udivmod64(a < 0 ? -(unsigned long long)a : (unsigned long long)a, b < 0 ? -(unsigned long long)b : (unsigned long long)b, &r);
  return (long long)(a < 0 ? -r : r);
}
__attribute__((weak)) unsigned __hexagon_udivsi3(unsigned a, unsigned b) { return (unsigned)__hexagon_udivdi3(a, b); }
__attribute__((weak)) unsigned __hexagon_umodsi3(unsigned a, unsigned b) { return (unsigned)__hexagon_umoddi3(a, b); }
__attribute__((weak)) int __hexagon_divsi3(int a, int b) { return (int)__hexagon_divdi3(a, b); }
__attribute__((weak)) int __hexagon_modsi3(int a, int b) { return (int)__hexagon_moddi3(a, b); }
/* ---- end of runtime ---- */
