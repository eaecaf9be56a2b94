/* Operand loads and result stores of the validation harness on HVX: aligned vector accesses
   (the record buffers are 256-byte aligned and every slot is aligned for its C type). */
#define ISADB_LOAD(T, v, src) ((v) = *(const T *)(const void *)(src))
#define ISADB_STORE(T, dst, v) (*(T *)(void *)(dst) = (v))
