/* Why this exists: archive member of the quick-start sample (libgreet.a); defines a function
 * and a mutable global that main.c reaches across the archive. */
#include <stdio.h>

int greet_calls;
static char buffer[128];

const char *greeting(const char *name) {
    greet_calls++;
    snprintf(buffer, sizeof buffer, "Hello from a program linked by %s!", name);
    return buffer;
}
