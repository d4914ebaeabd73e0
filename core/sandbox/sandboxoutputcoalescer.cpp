#include "sandbox/sandboxoutputcoalescer.h"

namespace loopscope {

SandboxOutputCoalescer::SandboxOutputCoalescer(SandboxOutputSink sink, const Limits &limits,
                                               QObject *parent)
    : QObject(parent)
    , m_sink(std::move(sink))
    , m_limits(limits) {
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &SandboxOutputCoalescer::flush);
    if (!m_sink || m_limits.capBytes <= 0)
        m_finished = true;
}

QString SandboxOutputCoalescer::capNotice(qint64 capBytes) {
    return QStringLiteral("\n[loopscope: live output stopped after %1 bytes; the run's full "
                          "output comes with its result]\n")
        .arg(capBytes);
}

void SandboxOutputCoalescer::add(const QString &stream, const QString &text) {
    if (m_finished || m_capped || text.isEmpty())
        return;
    QString piece = text;
    qint64 bytes = piece.toUtf8().size();
    if (m_delivered + bytes > m_limits.capBytes) {
        // Keep what fits, cut on a character boundary, then say why the rest is missing.
        const QByteArray fits = piece.toUtf8().left(m_limits.capBytes - m_delivered);
        piece = QString::fromUtf8(fits);
        if (piece.endsWith(QChar::ReplacementCharacter))
            piece.chop(1);
        piece += capNotice(m_limits.capBytes);
        bytes = fits.size();
        m_capped = true;
    }
    if (!m_pending.isEmpty() && m_pending.last().stream == stream)
        m_pending.last().text += piece;
    else
        m_pending.append({stream, piece});
    m_pendingBytes += bytes;
    m_delivered += bytes;
    if (m_capped || m_pendingBytes >= m_limits.chunkBytes)
        flush();
    else if (!m_timer.isActive())
        m_timer.start(m_limits.intervalMs);
}

void SandboxOutputCoalescer::flush() {
    m_timer.stop();
    const QList<Piece> pending = std::exchange(m_pending, {});
    m_pendingBytes = 0;
    for (const Piece &piece : pending)
        m_sink(piece.stream, piece.text);
}

void SandboxOutputCoalescer::finish() {
    if (m_finished)
        return;
    flush();
    m_finished = true;
}

} // namespace loopscope
