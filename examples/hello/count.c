/* Why this exists: second archive member of the quick-start sample (libgreet.a); a pure
 * function with a read-only lookup table, pulled in only because main.c references it. */
#include <ctype.h>

int count_letters(const char *s) {
    int n = 0;
    for (; *s; s++)
        if (isalpha((unsigned char)*s))
            n++;
    return n;
}
