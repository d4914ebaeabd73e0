// The floor under any user-space relay on this machine, Qt or not: bytes piped between a
// client's socket and an upstream socket with plain poll/read/write on a thread per connection,
// Nagle off, nothing parsed, checked or recorded. It sits beside relay_floor (the same pipe on a
// Qt event loop) to tell what Qt's socket layer adds, and takes the arguments bench_passthrough
// gives Loopscope (docs/benchmarks.md, issue 34). Written by hand: it is the thing measured.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void noDelay(int fd) {
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

bool writeAll(int fd, const char *data, ssize_t size) {
    while (size > 0) {
        const ssize_t n = write(fd, data, size_t(size));
        if (n <= 0)
            return false;
        data += n;
        size -= n;
    }
    return true;
}

// Both directions of one client connection and its upstream connection until either closes.
void relay(int client, sockaddr_in upstream) {
    const int up = socket(AF_INET, SOCK_STREAM, 0);
    if (up < 0 || connect(up, reinterpret_cast<sockaddr *>(&upstream), sizeof upstream) != 0) {
        close(client);
        if (up >= 0)
            close(up);
        return;
    }
    noDelay(client);
    noDelay(up);
    std::vector<char> buffer(256 * 1024);
    pollfd fds[2] = {{client, POLLIN, 0}, {up, POLLIN, 0}};
    for (;;) {
        if (poll(fds, 2, -1) < 0)
            break;
        bool open = true;
        for (int i = 0; i < 2 && open; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            const ssize_t n = read(fds[i].fd, buffer.data(), buffer.size());
            open = n > 0 && writeAll(fds[1 - i].fd, buffer.data(), n);
        }
        if (!open)
            break;
    }
    close(client);
    close(up);
}

} // namespace

int main(int argc, char **argv) {
    std::string host;
    int upstreamPort = 0;
    int port = 0;
    for (int i = 1; i + 1 < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--upstream") {
            // http://HOST:PORT[/path]
            const std::string url = argv[i + 1];
            const size_t start = url.find("://");
            const size_t hostStart = start == std::string::npos ? 0 : start + 3;
            const size_t colon = url.find(':', hostStart);
            const size_t slash = url.find('/', hostStart);
            if (colon != std::string::npos) {
                host = url.substr(hostStart, colon - hostStart);
                upstreamPort = std::atoi(url.substr(colon + 1, slash - colon - 1).c_str());
            }
        } else if (arg == "--port") {
            port = std::atoi(argv[i + 1]);
        }
    }
    sockaddr_in upstream{};
    upstream.sin_family = AF_INET;
    upstream.sin_port = htons(uint16_t(upstreamPort));
    if (upstreamPort <= 0 || inet_pton(AF_INET, host.c_str(), &upstream.sin_addr) != 1) {
        std::fprintf(stderr, "usage: relay_floor_raw --upstream http://IPV4:PORT [--port N]\n");
        return 2;
    }
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    const int on = 1;
    setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(uint16_t(port));
    socklen_t length = sizeof address;
    if (bind(server, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
        listen(server, 64) != 0 ||
        getsockname(server, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
        std::perror("relay_floor_raw");
        return 1;
    }
    std::printf("loopscope listening on http://127.0.0.1:%d\n", ntohs(address.sin_port));
    std::fflush(stdout);
    for (;;) {
        const int client = accept(server, nullptr, nullptr);
        if (client >= 0)
            std::thread(relay, client, upstream).detach();
    }
}
