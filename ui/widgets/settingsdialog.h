#pragma once

#include "models/appsettings.h"

#include <QDialog>

class QLineEdit;
class QSpinBox;

namespace loopscope {

// Edits AppSettings; the caller persists them (QSettings) and applies them.
class SettingsDialog : public QDialog {
    Q_OBJECT
public:
    explicit SettingsDialog(const AppSettings &settings, QWidget *parent = nullptr);

    AppSettings settings() const;

    QSpinBox *portBox() const { return m_port; }
    QLineEdit *upstreamEdit() const { return m_upstream; }
    QSpinBox *retentionBox() const { return m_retention; }

private:
    QSpinBox *m_port;
    QLineEdit *m_upstream;
    QSpinBox *m_upstreamTimeout;
    QSpinBox *m_executionTimeout;
    QSpinBox *m_maxLoops;
    QSpinBox *m_poolSize;
    QSpinBox *m_retention;
};

} // namespace loopscope
