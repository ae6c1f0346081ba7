int sn_convert_placeholder_(void); int sn_convert_placeholder_(void) { return 0; }
