#pragma once

#include "sandbox/sandboxbackend.h"

#include <QList>
#include <QObject>
#include <QTimer>

namespace loopscope {

// Bounds the live output of one run before it reaches a SandboxOutputSink: pieces are merged
// (per stream, in order) and delivered once the oldest undelivered piece is `intervalMs` old or
// `chunkBytes` have piled up, so a run that prints a line per microsecond costs at most ~20
// deliveries a second plus one per chunk. After `capBytes` (UTF-8) in total the run's live
// output stops with a visible notice; the run's final result is not affected. Every backend puts
// its run's output through one, so no sandbox (nor a misbehaving server) can flood the proxy with
// events. Lives on the backend's thread; flush() before finishing the run's future.
class SandboxOutputCoalescer : public QObject {
    Q_OBJECT
public:
    struct Limits {
        int intervalMs = 50;
        qint64 chunkBytes = 4096;
        qint64 capBytes = 256 * 1024; // per run; 0 turns live output off
    };

    explicit SandboxOutputCoalescer(SandboxOutputSink sink, const Limits &limits,
                                    QObject *parent = nullptr);
    explicit SandboxOutputCoalescer(SandboxOutputSink sink, QObject *parent = nullptr)
        : SandboxOutputCoalescer(std::move(sink), Limits{}, parent) {}

    void add(const QString &stream, const QString &text);
    // Delivers what is pending now.
    void flush();
    // Flushes and stops: later add()s are dropped (the run has finished).
    void finish();

    bool isCapped() const { return m_capped; }
    // Output is waiting for its delivery (pending, or the interval's timer runs).
    bool hasPending() const { return !m_pending.isEmpty() || m_timer.isActive(); }
    qint64 deliveredBytes() const { return m_delivered; }

    static QString capNotice(qint64 capBytes);

private:
    struct Piece {
        QString stream;
        QString text;
    };

    SandboxOutputSink m_sink;
    Limits m_limits;
    QList<Piece> m_pending;
    qint64 m_pendingBytes = 0;
    qint64 m_delivered = 0; // including what is pending
    bool m_capped = false;
    bool m_finished = false;
    QTimer m_timer;
};

} // namespace loopscope
