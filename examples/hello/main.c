/* Why this exists: the entry point of the quick-start sample that scripts/sample.sh links with
 * dtld. It calls into libgreet.a (greet.c, count.c) so the link exercises objects, an archive,
 * cross-file data references and libc. */
#include <stdio.h>
#include <string.h>

const char *greeting(const char *name);
int count_letters(const char *s);
extern int greet_calls;

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "dtld";
    const char *msg = greeting(name);
    int letters = count_letters(msg);
    printf("%s\n", msg);
    printf("letters: %d, greet calls: %d\n", letters, greet_calls);
    /* Self-check so the sample proves the link worked, not just that it ran. */
    if (greet_calls != 1 || letters != count_letters(msg) || strstr(msg, name) == NULL)
        return 1;
    return 0;
}
