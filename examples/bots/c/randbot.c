/* A Concordia bot in C: plays a random legal action, reproducibly from the seed it is given.
 *
 * The protocol (docs/bot-protocol.md): one JSON object per line on stdin and stdout. This bot
 * does not parse JSON: it scans the hello line for "seed" and each request line for the "legal"
 * list, which is all it needs ("want": [] asks for nothing else). Build: cc -O2 -o randbot randbot.c
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64: a small, well-mixed generator; the same seed gives the same choices */
static unsigned long long state;

static unsigned long long next_random(void) {
    unsigned long long z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* the text just after "key": in line, or NULL */
static const char *value_of(const char *line, const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = strstr(line, pattern);
    if (at == NULL) return NULL;
    at += strlen(pattern);
    while (*at == ' ') at++;
    return at;
}

/* read the ints of the "legal" list into ids; their count (0 if there is no list) */
static int legal_ids(const char *line, long *ids, int capacity) {
    const char *at = value_of(line, "legal");
    int n = 0;
    if (at == NULL || *at != '[') return 0;
    at++;
    while (*at != ']' && *at != '\0' && n < capacity) {
        char *end;
        long id = strtol(at, &end, 10);
        if (end == at) { at++; continue; } /* a comma or a space */
        ids[n++] = id;
        at = end;
    }
    return n;
}

int main(void) {
    char *line = NULL;
    size_t size = 0;
    long ids[512];
    if (getline(&line, &size, stdin) < 0) return 1; /* the hello */
    const char *seed = value_of(line, "seed");
    state = seed ? strtoull(seed, NULL, 10) : 0;
    printf("{\"type\":\"hello\",\"protocol\":\"concordia-bot\",\"version\":1,\"name\":\"c-random\",\"want\":[]}\n");
    fflush(stdout);
    while (getline(&line, &size, stdin) >= 0) { /* one request per line until stdin closes */
        int n = legal_ids(line, ids, 512);
        if (n == 0) {
            fprintf(stderr, "c-random: no legal ids in the request\n");
            return 2;
        }
        printf("{\"action\":%ld}\n", ids[next_random() % (unsigned long long)n]);
        fflush(stdout);
    }
    free(line);
    return 0;
}
