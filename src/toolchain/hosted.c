/* The prelude of every x86 and NEON program isadb builds (after the intrinsics header):
   emit and read_in over stdout and stdin, and a main that returns harness_main()'s value. */
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* Writes n bytes at p to stdout (unbuffered, retries partial writes). */
static void emit(const void *p, unsigned long n) {
  const char *c = (const char *)p;
  while (n > 0) {
    long w = (long)write(1, c, n);
    if (w <= 0) break;
    c += w;
    n -= (unsigned long)w;
  }
}

/* Reads up to n bytes from stdin into p, retrying short reads; returns the count read (n unless EOF/error). */
static unsigned long read_in(void *p, unsigned long n) {
  char *c = (char *)p;
  unsigned long got = 0;
  while (got < n) {
    long r = (long)read(0, c + got, n - got);
    if (r <= 0) break;
    got += (unsigned long)r;
  }
  return got;
}

int harness_main(void);
int main(void) { return harness_main(); }
