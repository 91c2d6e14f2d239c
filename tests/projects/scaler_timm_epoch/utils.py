def update_summary(epoch, **metrics):
    return {"epoch": epoch, **metrics}
