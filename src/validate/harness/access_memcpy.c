/* Operand loads and result stores of the validation harness on x86 and NEON: memcpy, which
   needs no alignment. */
#define ISADB_LOAD(T, v, src) memcpy(&(v), (src), sizeof(T))
#define ISADB_STORE(T, dst, v) memcpy((dst), &(v), sizeof(T))
