#pragma once

#include <QJsonObject>
#include <QList>
#include <QWidget>

#include <functional>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace loopscope {

// A paused flow, shown clearly: what is paused (flow, kind, call), the code in an editable
// editor, and Run, Run edited, Deny…, Abort, "Auto-approve this session". Ctrl+Enter runs,
// Ctrl+Backspace denies. Fed by the Paused / Resumed inspector events (several flows may be
// paused: the oldest is shown, the rest wait). The decisions go out as signals, which the
// window sends to the proxy (ProxyControl, queued to the proxy thread).
class PausedBanner : public QWidget {
    Q_OBJECT
public:
    explicit PausedBanner(QWidget *parent = nullptr);

    void onPaused(const QJsonObject &pause);
    void onResumed(const QString &pauseId);
    // The pause shown, {} when none.
    QJsonObject current() const;
    int pendingCount() const { return int(m_pending.size()); }

    QPlainTextEdit *editor() const { return m_editor; }
    QPushButton *runButton() const { return m_run; }
    QPushButton *runEditedButton() const { return m_runEdited; }
    QPushButton *denyButton() const { return m_deny; }
    QPushButton *abortButton() const { return m_abort; }
    QPushButton *autoApproveButton() const { return m_autoApprove; }

    // Deny asks for the message the model gets; tests replace the dialog.
    std::function<QString(const QString &defaultMessage, bool *ok)> askDenyMessage;

public slots:
    void run();
    void runEdited();
    void deny();
    void abort();
    void autoApproveSession();

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

signals:
    // {"action":"continue"|"deny"|"abort", "code"?, "message"?} as the control API takes it.
    void resolveRequested(const QString &pauseId, const QJsonObject &decision);
    // Later code pauses of this session (or, without one, this flow) are skipped.
    void autoApproveRequested(const QString &sessionOrFlowId);
    void pendingChanged(int count);

private:
    void showCurrent();
    void updateTitle();
    void resolve(const QJsonObject &decision);

    QList<QJsonObject> m_pending;
    QLabel *m_title;
    QPlainTextEdit *m_editor;
    QPushButton *m_run;
    QPushButton *m_runEdited;
    QPushButton *m_deny;
    QPushButton *m_abort;
    QPushButton *m_autoApprove;
};

} // namespace loopscope
