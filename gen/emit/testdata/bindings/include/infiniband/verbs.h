/* A minimal verbs.h for the bindings case: the shims include it. */
#include <stdint.h>
