#pragma once

#include <QObject>

class QSocketNotifier;

// Turns SIGINT/SIGTERM into a Qt signal on the thread that created the watcher (self-pipe: the
// handler only write()s a byte, which is async-signal-safe; a QSocketNotifier reads it).
class SignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

signals:
    void terminationRequested(int signalNumber);

private:
    QSocketNotifier *m_notifier = nullptr;
};
