"""The memory model (`zerolint estimate`, ZL801): pure arithmetic over model shapes; needs only base/."""
