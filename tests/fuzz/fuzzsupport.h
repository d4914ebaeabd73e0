#pragma once
// Shared by the fuzz targets: one QCoreApplication for the targets that need an event loop, quiet
// Qt logging (a warning per input would dominate the run) that still aborts on qFatal, and a
// check that aborts — a broken invariant is a crash for libFuzzer and a failure for the replay.

#include <QByteArray>
#include <QCoreApplication>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace loopscope::fuzz {

inline void quietHandler(QtMsgType type, const QMessageLogContext &, const QString &message) {
    if (type == QtFatalMsg) {
        std::fprintf(stderr, "qFatal: %s\n", qPrintable(message));
        std::abort();
    }
}

inline QCoreApplication *ensureApp() {
    static int argc = 1;
    static char name[] = "loopscope-fuzz";
    static char *argv[] = {name, nullptr};
    static QCoreApplication *app = [] {
        qInstallMessageHandler(quietHandler);
        return new QCoreApplication(argc, argv);
    }();
    return app;
}

// A broken invariant: print it and abort so libFuzzer saves the input.
#define FUZZ_CHECK(condition)                                                                      \
    do {                                                                                           \
        if (!(condition)) {                                                                        \
            std::fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #condition, __FILE__,      \
                         __LINE__);                                                                \
            std::abort();                                                                          \
        }                                                                                          \
    } while (false)

// Reads a fuzz input front to back: small numbers first (splits, caps), the rest as payload.
class FuzzInput {
public:
    FuzzInput(const uint8_t *data, size_t size)
        : m_bytes(reinterpret_cast<const char *>(data), qsizetype(size)) {}
    quint8 byte() { return m_pos < m_bytes.size() ? quint8(m_bytes.at(m_pos++)) : 0; }
    QByteArray rest() { return m_pos < m_bytes.size() ? m_bytes.mid(m_pos) : QByteArray(); }
    const QByteArray &all() const { return m_bytes; }

private:
    QByteArray m_bytes;
    qsizetype m_pos = 0;
};

} // namespace loopscope::fuzz
